"""Drawing: the outer ring that turns traces, counterexamples and state graphs into pictures.

Nothing in the exploring and simulating core imports from here; these modules import the core.
"""
