"""`steersim estimate`: intervals that hold the rate a large sweep counts, honest bounds from zero
observed violations, SPRT assertions, queries on facts and measures, and grid sweeps."""

from __future__ import annotations

import json
import math

import pytest

from steersim.cli import main
from steersim.core.facts import Fact
from steersim.core.registry import get_model_spec
from steersim.simulate.estimate import Plan
from steersim.simulate.executors import sweep
from steersim.simulate.intervals import Sprt, proportion_interval, summarise
from steersim.simulate.queries import MEASURES, parse_assertion, parse_query
from steersim.simulate.simulator import Simulator
from steersim.simulate.study import Axis, estimate_setting, setting
from steersim.simulate.sweep import RunVerdict

BUG = "lost-at-boundary"
REFERENCE_SEEDS = 1_000_000  # the reference sweeps start here, far from the estimates' seeds 0, 1, ...


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def reference_rate(runs: int, params: dict | None = None) -> float:
    """The violation rate the existing sweep counts over `runs` seeds the estimates never use."""
    report = sweep("teaching", get_model_spec("teaching").resolve(params or {}, BUG), BUG,
                   range(REFERENCE_SEEDS, REFERENCE_SEEDS + runs))
    return report.violating_runs / report.runs


def buggy_estimate(runs: int, params: dict | None = None):
    return estimate_setting(setting("teaching", params, BUG), parse_query("violation"), Plan(runs=runs))


@pytest.mark.slow
def test_the_95_interval_contains_the_rate_of_a_100000_run_sweep_with_other_seeds():
    answer = buggy_estimate(10_000)
    rate = reference_rate(100_000)
    print(f"estimate {answer.estimate:.5f} [{answer.low:.5f}, {answer.high:.5f}] from 10,000 runs; "
          f"reference {rate:.5f} from 100,000 runs")
    assert answer.low <= rate <= answer.high


def test_the_95_interval_contains_the_rate_of_a_larger_sweep_with_other_seeds():
    answer = buggy_estimate(2_000)
    assert answer.interval.bound is None and answer.low < answer.estimate < answer.high
    assert answer.low <= reference_rate(10_000) <= answer.high


def test_the_interval_tells_a_different_configuration_apart():
    """The containment above is a check that can fail: with six steers the bug bites far more often,
    and the interval of three steers does not hold that rate."""
    answer = buggy_estimate(2_000)
    assert not answer.low <= reference_rate(4_000, {"N": 6}) <= answer.high


def test_no_violation_in_10000_runs_reports_the_upper_bound_never_zero(tmp_path, capsys):
    out_file = tmp_path / "e.json"
    code, out, _ = run_cli(capsys, "estimate", "teaching", "--runs", "10000", "--json", str(out_file))
    assert code == 0
    report = json.loads(out_file.read_text())
    bound = 1 - 0.05 ** (1 / 10_000)  # the one-sided exact bound for 0 of n: 1 - (1 - confidence)^(1/n)
    assert report["runs"] == 10_000 and report["successes"] == 0 and report["bound"] == "upper"
    assert report["estimate"] == 0.0 and report["low"] == 0.0
    assert report["high"] == pytest.approx(bound, rel=1e-9)
    assert report["seeds"] == [0, 9_999] and report["method"] == "exact" and report["confidence"] == 0.95
    assert out.startswith("P(violation) < 0.0300% at 95% (0 of 10,000 runs")
    assert "0%," not in out and " 0%" not in out


def test_wilson_and_exact_intervals_agree_roughly_and_differ():
    exact, wilson = (proportion_interval(37, 2_000, 0.95, m) for m in ("exact", "wilson"))
    assert exact.low < 37 / 2_000 < exact.high and wilson.low < 37 / 2_000 < wilson.high
    assert (exact.low, exact.high) != (wilson.low, wilson.high)
    assert exact.high == pytest.approx(wilson.high, rel=0.1)
    assert proportion_interval(2_000, 2_000).bound == "lower"


def test_precision_runs_until_the_interval_is_that_narrow_and_no_longer(tmp_path, capsys):
    out_file = tmp_path / "p.json"
    code, _, _ = run_cli(capsys, "estimate", "teaching", "--bug", BUG, "--precision", "0.01",
                         "--json", str(out_file))
    report = json.loads(out_file.read_text())
    assert code == 0 and report["complete"]
    assert report["high"] - report["low"] <= 0.01
    half = buggy_estimate(report["runs"] // 2)  # the batch before the last one was not yet narrow enough
    assert half.high - half.low > 0.01
    code, out, _ = run_cli(capsys, "estimate", "teaching", "--precision", "0.0001", "--max-runs", "1500")
    assert code == 3 and "incomplete" in out and "1,500 runs" in out


def test_estimates_do_not_depend_on_the_executor(tmp_path, capsys):
    texts = []
    for workers in ("1", "2"):
        out_file = tmp_path / f"w{workers}.json"
        run_cli(capsys, "estimate", "teaching", "--bug", BUG, "--runs", "1200", "measure:steer-latency",
                "--workers", workers, "--json", str(out_file))
        texts.append(out_file.read_bytes())
    assert texts[0] == texts[1]


# --- the SPRT --------------------------------------------------------------------------------------

def test_assert_decides_a_true_bound_on_the_correct_model_within_its_budget(capsys):
    code, out, _ = run_cli(capsys, "estimate", "teaching", "--assert", "P(violation) < 0.01", "--max-runs", "2000")
    assert code == 0 and out.startswith("holds:")
    # no run violates, so the ratio falls by log((1 - p_high) / (1 - p_low)) a run, down to log(beta / (1 - alpha))
    sprt = Sprt("<", 0.01)
    expected = math.ceil(math.log(0.01 / 0.99) / math.log((1 - 0.015) / (1 - 0.005)))
    assert sprt.p_low == pytest.approx(0.005) and sprt.p_high == pytest.approx(0.015)
    assert f"after {expected:,} runs" in out


def test_assert_decides_a_false_bound_on_the_buggy_model_within_its_budget(tmp_path, capsys):
    out_file = tmp_path / "a.json"
    code, out, _ = run_cli(capsys, "estimate", "teaching", "--bug", BUG, "--assert", "P(violation) < 0.005",
                           "--max-runs", "2000", "--json", str(out_file))
    assert code == 1 and out.startswith("fails:")
    report = json.loads(out_file.read_text())
    assert report["assertion"]["decision"] == "fails" and report["runs"] < 2_000
    assert report["assertion"]["llr"] >= report["assertion"]["thresholds"][1]
    code, out, _ = run_cli(capsys, "estimate", "teaching", "--bug", BUG, "--assert", "P(violation) >= 0.005",
                           "--max-runs", "2000")
    assert code == 0 and out.startswith("holds:")


def test_assert_says_undecided_when_the_budget_ends_first(capsys):
    code, out, _ = run_cli(capsys, "estimate", "teaching", "--bug", BUG, "--assert", "P(violation) < 0.005",
                           "--max-runs", "40")
    assert code == 3 and out.startswith("undecided:") and "after 40 runs" in out


def test_the_sprt_decides_at_the_same_run_whatever_the_batches():
    sprt = Sprt(">", 0.2)
    outcomes = [i % 3 == 0 for i in range(400)]
    whole = sprt.advance(0.0, outcomes)
    llr, taken = 0.0, 0
    for start in range(0, 400, 7):
        llr, step, high = sprt.advance(llr, outcomes[start : start + 7])
        if step is not None:
            taken = start + step
            break
    assert whole[1] == taken and whole[2] is True and high is True and sprt.holds(True)


# --- queries -----------------------------------------------------------------------------------------

def test_the_fast_path_observes_the_facts_a_recorded_run_shows():
    model = get_model_spec("teaching").build({}, BUG)
    watch = frozenset({"steer.accepted", "steer.applied", "turn.started"})
    fast, recording = Simulator(model, watch=watch), Simulator(model)
    for seed in range(60):
        recorded = [(s.t, f) for s in recording.run(seed, record=True).steps for f in s.transition.facts
                    if f.name in watch]
        assert fast.run(seed).observed == recorded
        assert recorded, "every run accepts a steer"


def test_fact_queries_with_a_deadline(tmp_path, capsys):
    def rate(query):
        code, _, _ = run_cli(capsys, "estimate", "teaching", query, "--runs", "500", "--json", str(tmp_path / "f.json"))
        assert code == 0
        return json.loads((tmp_path / "f.json").read_text())["estimate"]

    never, early, late, ever = (rate(q) for q in ("fact:steer.applied within 0", "fact:steer.applied within 3",
                                                  "fact:steer.applied within 10", "fact:steer.applied"))
    assert never == 0.0 < early < late < ever <= 1.0


def test_steer_latency_is_measured_from_accepted_to_applied():
    def fact(name, **fields):
        return Fact(name, tuple(fields.items()))

    verdict = RunVerdict(0, 5, "quiescent", 9.0, (), (), (
        (1.0, fact("steer.accepted", id="s1")), (2.0, fact("steer.accepted", id="s2")),
        (3.5, fact("steer.applied", id="s1", turn="t")), (4.0, fact("turn.started", turn="t", chain="c"))))
    assert MEASURES["steer-latency"].samples(verdict) == ([2.5], 1)
    assert MEASURES["turns-per-run"].samples(verdict) == ([1.0], 0)
    summary = summarise([1.0, 2.0, 3.0, 4.0])
    assert summary.mean == 2.5 and summary.low < 2.5 < summary.high
    assert dict(summary.quantiles)[0.5] == 2.5 and sum(summary.histogram[1]) == 4


def test_a_measure_reports_mean_quantiles_and_histogram(tmp_path, capsys):
    out_file = tmp_path / "m.json"
    code, out, _ = run_cli(capsys, "estimate", "teaching", "measure:steer-latency", "--runs", "300",
                           "--json", str(out_file))
    report = json.loads(out_file.read_text())
    assert code == 0 and out.startswith("measure:steer-latency: mean ")
    assert report["low"] < report["estimate"] == report["mean"] < report["high"]
    assert report["quantiles"]["p50"] <= report["quantiles"]["p90"] <= report["quantiles"]["p99"]
    assert sum(report["histogram"]["counts"]) == report["samples"] > report["runs"]


@pytest.mark.parametrize(("argv", "says"), [
    (["fact:steer.landed"], "unknown fact 'steer.landed'"),
    (["fact:steer.applied within soon"], "`within` takes a virtual time"),
    (["violation:no-such-property"], "has no property 'no-such-property'"),
    (["measure:speed"], "unknown measure"),
    (["P(violation) < 0.1"], "cannot read query"),
    (["--assert", "P(violation) ~ 0.1"], "cannot read assertion"),
    (["--assert", "P(measure:turns-per-run) < 0.1"], "needs an event"),
    (["--assert", "P(violation) < 1.5"], "strictly between 0 and 1"),
    (["--assert", "P(violation) < 0.1", "--runs", "10"], "--assert decides its own number of runs"),
    (["--runs", "10", "--precision", "0.1"], "not both"),
    (["--method", "jeffreys"], "--method takes exact or wilson"),
    (["--confidence", "1.5"], "strictly between 0 and 1"),
    (["--grid", "Q"], "write NAME=V1,V2"),
    (["--grid", "timing:tool.finish.mean=1"], "has no field 'mean'"),
    (["--plot", "x.png"], "--plot draws a --grid sweep"),
])
def test_bad_queries_and_options_are_refused_in_one_line(capsys, argv, says):
    code, out, err = run_cli(capsys, "estimate", "teaching", *argv)
    assert code == 2 and says in err and err.count("\n") == 1 and not out


def test_assertions_parse_every_comparison():
    for op in ("<", "<=", ">", ">="):
        query, parsed_op, bound = parse_assertion(f"P(fact:steer.rejected within 2.5) {op} 0.25")
        assert (query.text, parsed_op, bound) == ("fact:steer.rejected within 2.5", op, 0.25)


# --- grids ---------------------------------------------------------------------------------------------

def test_a_timing_axis_sets_matching_entries_or_adds_its_own_first():
    base = setting("teaching")
    tools = Axis("timing:tool.*.median", (0.5,)).at(base, 0.5)
    assert tools.timing["tool.finish"]["median"] == 0.5 and list(tools.timing) == list(base.timing)
    clear = Axis("timing:agent.clear.mean", (3.0,)).at(base, 3.0)
    assert next(iter(clear.timing)) == "agent.clear"
    assert clear.timing["agent.clear"] == {**base.timing["default"], "mean": 3.0}


def test_a_grid_uses_the_same_seeds_at_every_point_and_draws_bands(tmp_path, capsys):
    out_file, picture = tmp_path / "g.json", tmp_path / "g.png"
    code, out, _ = run_cli(capsys, "estimate", "teaching", "--bug", BUG, "-p", "N=6", "--runs", "600",
                           "--grid", "timing:agent.clear.mean=0.05,0.8,3.2", "--json", str(out_file),
                           "--plot", str(picture))
    assert code == 0 and out.splitlines()[0].split() == ["timing:agent.clear.mean", "estimate", "low", "high", "runs"]
    report = json.loads(out_file.read_text())
    points = report["points"]
    assert [p["value"] for p in points] == [0.05, 0.8, 3.2]
    assert all(p["seeds"] == [0, 599] for p in points)
    assert points[0]["high"] < points[-1]["low"], "a window sixty times wider loses steers more often"
    assert picture.read_bytes().startswith(b"\x89PNG")


# --- explanations of zero observed violations --------------------------------------------------------

def test_explain_proves_zero_on_the_correct_model(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "estimate", "teaching", "--runs", "200", "--explain", str(tmp_path))
    assert code == 0 and "the explorer finds no interleaving that violates any safety property" in out
    assert not list(tmp_path.iterdir())


def test_explain_writes_the_rare_counterexample_with_times(tmp_path, capsys):
    code, out, _ = run_cli(capsys, "estimate", "teaching", "--bug", BUG, "--runs", "5", "--explain", str(tmp_path))
    assert code == 0 and "< 45.1% at 95% (0 of 5 runs" in out and "the explorer finds ordered-history violated" in out
    (trace,) = tmp_path.iterdir()
    steps = [json.loads(line) for line in trace.read_text().splitlines()[1:] if '"t"' in line]
    assert steps and all(s["t"] is not None for s in steps)
    code, out, _ = run_cli(capsys, "replay", str(trace))
    assert code == 1 and out.startswith("ok:")


def test_counts_equal_what_the_sweep_report_counts_on_the_same_seeds():
    report = sweep("teaching", get_model_spec("teaching").resolve({}, BUG), BUG, range(1_000))
    rows = {row["name"]: row for row in report.property_status()}
    for query, counted in (("violation", report.violating_runs),
                           ("violation:no-lost-steers", rows["no-lost-steers"]["runs"]),
                           ("reached:steer-skips-a-call", rows["steer-skips-a-call"]["runs"])):
        answer = estimate_setting(setting("teaching", None, BUG), parse_query(query), Plan(runs=1_000))
        assert answer.interval.successes == counted, query


def test_quantile_intervals_come_from_the_order_statistics():
    summary = summarise([float(v) for v in range(1, 101)])
    (p50_low, p50_high), _, (p99_low, p99_high) = summary.quantile_intervals
    assert p50_low < 50.5 < p50_high and p99_low < dict(summary.quantiles)[0.99]
    assert p99_high is None, "a hundred samples cannot bound the 99th percentile from above"
