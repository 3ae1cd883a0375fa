"""The pytest plugin: assert_properties, its fixture, its failure text, and the steersim_slow marker."""

from __future__ import annotations

import pytest

from steersim.integrations.pytest_plugin import assert_properties
from steersim.models.teaching import SPEC

pytest_plugins = ["pytester"]


def test_a_correct_model_passes_and_returns_the_result() -> None:
    result = assert_properties("teaching", K=2, N=2)
    assert result.status == "ok"


def test_a_model_object_is_accepted() -> None:
    assert assert_properties(SPEC.build({"K": 1})).status == "ok"


def test_a_model_object_takes_no_parameters() -> None:
    with pytest.raises(TypeError, match="already built"):
        assert_properties(SPEC.build({}), K=2)


def test_a_bug_fails_with_the_shortest_counterexample_as_a_table() -> None:
    with pytest.raises(AssertionError) as failure:
        assert_properties("teaching", bug="launch-after-steer", K=2)
    text = str(failure.value)
    assert text.startswith("teaching[K=2 N=3 Q=2 P=3] bug=launch-after-steer: violation")
    assert "violated: always steer-before-launch" in text
    assert "shortest counterexample, 3 steps:" in text
    table = text[text.index("shortest counterexample, 3 steps:"):].splitlines()
    assert table[1].split()[:3] == ["initial", "state:", 'phase="model",']
    assert table[2].split() == ["#", "actor", "action", "facts", "state", "changes"]
    assert table[3].split()[:3] == ["0", "user", "user.steer(1)"]
    assert table[3].endswith('queue=["s1"], sent=1')  # what the step changed, in the model's own names
    assert table[5].split()[:3] == ["2", "agent", "agent.launch(0)"]


def test_the_fixture_and_marker_in_a_users_test_suite(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        import pytest

        def test_correct(assert_properties):
            assert_properties("teaching", K=1)

        def test_buggy(assert_properties):
            assert_properties("teaching", bug="no-skip-result", K=1)

        @pytest.mark.steersim_slow
        def test_big(assert_properties):
            assert_properties("teaching", K=3)
        """
    )
    result = pytester.runpytest("-m", "not slow", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1, deselected=1)
    result.stdout.fnmatch_lines(["*violated: always paired-tool-results*", "*shortest counterexample, * steps:*",
                                 "*#*actor*action*facts*"])
    slow = pytester.runpytest("-m", "slow", "-p", "no:cacheprovider", "--strict-markers")
    slow.assert_outcomes(passed=1, deselected=2)
