"""Traces: the JSON Lines format and replay, and canonical traces found by search."""
