"""steersim inside other tools: the check matrix for CI, the pytest plugin and Hypothesis
strategies."""
