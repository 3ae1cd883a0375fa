"""Helpers the model test modules share: verdicts of an exhaustive check, by property name."""

from __future__ import annotations

from sim import CheckOptions, check

PASSING = ("holds", "reached")


def verdicts(spec, params=None, bug=None):
    """The check result and its properties by name (every property judged: keep_going)."""
    result = check(spec.build(params or {}, bug), CheckOptions(keep_going=True))
    return result, {p.name: p for p in result.properties}


def assert_all_hold(spec, params):
    """Every property holds or is reached for `params`; returns the check result."""
    result, props = verdicts(spec, params)
    bad = {name: p.status for name, p in props.items() if p.status not in PASSING}
    assert not bad, f"{params}: {bad}"
    return result
