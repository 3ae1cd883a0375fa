"""The `steersim` command line (design section 5).

Exit codes (steersim.errors): 0 every property holds; 1 a property is violated or a `sometimes` was never
reached; 2 bad usage or bad input (one line naming the problem and the fix); 3 incomplete (a limit was
hit before any violation); 4 internal error (one line, the traceback in a file); 130 interrupted (Ctrl-C:
the partial report was written, `steersim.interrupts`); 141 the reader of the output closed it early.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from steersim.argtypes import (
    dask_address,
    non_negative_float,
    non_negative_int,
    output_file,
    output_folder,
    positive_float,
    positive_int,
)
from steersim.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_INCOMPLETE,
    EXIT_INTERNAL,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    EXIT_VIOLATION,
    ArgumentParser,
    UsageError,
)

# A command's parallelism is its own (`--workers`, `--dask`) and it does no linear algebra that a second
# BLAS thread would speed up, while OpenBLAS, which numpy and scipy each load, starts a thread per core
# that spins for a while on loading: on two cores about a sixth of a second of CPU per command, taken
# from the search it runs beside. Set on importing the command line, before any command loads numpy;
# worker processes inherit it; a value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
SEED_LIMIT = 2**64  # seeds are 64-bit: a trace's JSON seed stays exact in every reader
MAX_SEEDS = 10**8  # runs of one command at most: a typo such as 0..10000000000 is refused, not started


def parse_seeds(text: str) -> range:
    """`A..B` (inclusive) or a single seed `N`."""
    lo, sep, hi = text.partition("..")
    shown = text if len(text) <= 40 else text[:37] + "..."
    try:
        start = int(lo)
        stop = int(hi) if sep else start
    except ValueError:
        raise UsageError(f"--seeds takes A..B or N with whole numbers, not {shown!r} (e.g. --seeds 0..999)") from None
    if start < 0 or stop < start or stop >= SEED_LIMIT:
        raise UsageError(f"--seeds {shown}: need 0 <= A <= B < 2**64")
    if stop - start >= MAX_SEEDS:
        raise UsageError(f"--seeds {shown}: {stop - start + 1:,} runs; one command runs at most {MAX_SEEDS:,} "
                         "(split the range into several sweeps)")
    return range(start, stop + 1)


def _model_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("model", help="model name (see `steersim models`), path/to/file.py:SPEC or package.module:SPEC")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE", help="set a parameter")
    p.add_argument("--bug", help="run a named bug variant")


def _run_args(p: argparse.ArgumentParser, seeds: str) -> None:
    """The options of commands that simulate seeds."""
    p.add_argument("--seeds", default=seeds, help=f"A..B inclusive, or N (default {seeds})")
    p.add_argument("--timing", help="TOML timing profile (default: the model's own)")
    p.add_argument("--max-steps", type=non_negative_int, default=10_000, help="steps per run at most")


def _resolve(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    """The spec the model argument names and the parameters of this run, resolved once: whatever the
    command builds, reports or ships to workers comes from these."""
    from steersim.core.registry import get_model_spec

    spec = get_model_spec(args.model)
    return spec, spec.resolve(spec.parse_assignments(args.param), args.bug)


def _build(args: argparse.Namespace) -> tuple[Any, dict[str, Any], Any]:
    spec, params = _resolve(args)
    return spec, params, spec.build_resolved(params, args.bug)


def cmd_models(args: argparse.Namespace) -> int:
    from steersim.core.registry import available_models, get_model_spec

    specs = {ref: get_model_spec(ref) for ref in args.model} if args.model else available_models()
    if args.json:
        print(json.dumps([spec.to_json() for spec in specs.values()], indent=2))
        return EXIT_OK
    for spec in specs.values():
        print(f"{spec.name}: {spec.doc}")
        for param in spec.params:
            print(f"  -p {param.name}={param.default!s:<12} {param.doc}")
        for bug, doc in spec.bugs.items():
            print(f"  --bug {bug}: {doc}")
        for reading in spec.readings:
            print(f"  reading {' '.join(f'-p {part}' for part in reading.assignments)}: {reading.doc}")
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    from steersim.checking.engines import check, refusal
    from steersim.checking.explorer import CheckOptions, resume
    from steersim.checking.readings import worst_exit_code
    from steersim.report.formats import check_json, check_junit, write_json

    if args.strategy not in ("bfs", "dfs"):
        raise UsageError(f"--strategy takes bfs or dfs, not {args.strategy!r}")
    progress = None if args.quiet else _progress_line
    options = CheckOptions(strategy=args.strategy, max_states=args.max_states, max_depth=args.max_depth,
                           timeout=args.timeout, max_memory_mb=args.max_memory, keep_going=args.keep_going,
                           liveness=not args.no_liveness, liveness_limit=args.liveness_limit, progress=progress,
                           por=args.por, symmetry=args.symmetry, checkpoint=args.checkpoint,
                           checkpoint_every=args.checkpoint_every, engine=args.engine)
    parallel = args.workers > 1 or args.dask is not None
    if args.resume and parallel:
        chosen = f"--dask {args.dask}" if args.dask is not None else f"--workers {args.workers}"
        raise UsageError(f"--resume cannot be used with {chosen}: a checkpoint is resumed by one process; "
                         f"drop {chosen.split()[0]}")
    refused = refusal(options, args.workers, args.dask)
    if refused is not None:
        raise UsageError(refused)
    spec, params, model = _build(args)
    options.identity = {"model": args.model, "params": params, "bug": args.bug}
    if args.checkpoint or args.resume:
        from steersim.checking.source import source_digest

        options.identity["source"] = source_digest(args.model)
    if args.graph:
        from steersim.checking.graph import check_graph_path, state_graph, write_graph

        check_graph_path(args.graph)
        write_graph(state_graph(model), args.graph)
    if args.resume:
        result = resume(model, args.resume, options)
    else:
        result = check(model, options, workers=args.workers, dask=args.dask)
    for prop in result.properties:
        line = f"{prop.status:>10}  {prop.kind:<10} {prop.name}"
        if prop.status == "violated" and prop.counterexample is not None:
            line += f"  ({len(prop.counterexample.steps)} steps)"
        print(line)
    for prop in result.properties:
        if prop.status == "violated" and prop.counterexample is not None:
            _print_counterexample(prop, model)
    for note in result.notes:
        print(f"note: {note}")
    stopped_early = _stopped_early(result, args.keep_going)
    for line in result.coverage.lines(stopped_early):
        print(line)
    print(f"{result.status}: {result.states:,} distinct states, {result.transitions:,} transitions, "
          f"depth {result.max_depth}, {result.seconds:.2f} s")
    readings = _check_readings(args, spec, options, result) if _runs_readings(args, spec) else []
    if args.json:
        write_json(args.json, check_json(result, params, args.bug, args.model, readings))
    if args.junit:
        Path(args.junit).write_text(check_junit(result, args.bug, readings))
    if args.traces:
        from steersim.report.artefacts import write_check_traces

        written = write_check_traces(result, model, args.model, params, args.bug, args.traces)
        print(f"wrote {len(written)} traces and diagrams to {args.traces}")
    if args.require_coverage and result.coverage.unfired:
        if stopped_early:
            print(f"coverage failure: action kind {', '.join(result.coverage.unfired)} never fired before the "
                  f"search stopped early ({stopped_early}; --require-coverage)")
        else:
            print(f"coverage failure: action kind {', '.join(result.coverage.unfired)} never fired at these "
                  "parameters (--require-coverage); change the parameters to reach it, or remove it from the model")
        return EXIT_VIOLATION
    if args.require_coverage and result.coverage.wrongly_not_enabled:
        print(f"coverage failure: action kind {', '.join(result.coverage.wrongly_not_enabled)} fired although "
              "the model declares it not enabled by these parameters (--require-coverage); fix the model's "
              "kinds_not_enabled")
        return EXIT_VIOLATION
    return worst_exit_code([result.exit_code, *(r.result.exit_code for r in readings)])


def _runs_readings(args: argparse.Namespace, spec: Any) -> bool:
    """Whether this check also explores the model's readings: only the default check does (no `-p`, no
    bug variant), and only a check of one configuration's graph that ends here (not a checkpointed or
    resumed one, not one exporting its graph)."""
    plain = not (args.param or args.bug or args.defaults_only or args.checkpoint or args.resume or args.graph)
    return plain and bool(spec.readings)


def _check_readings(args: argparse.Namespace, spec: Any, options: Any, defaults: Any) -> list[Any]:
    """Check each reading after the defaults; one line each, and for a reading that fails its failing
    properties, their counterexamples and the command that checks it alone."""
    from steersim.checking.explorer import INTERRUPTED
    from steersim.checking.readings import check_readings

    if defaults.status == INTERRUPTED:
        return []
    print(f"readings ({len(spec.readings)}; each alone: -p as shown; --defaults-only skips them):")
    done = []
    for checked in check_readings(spec, args.model, options, workers=args.workers, dask=args.dask):
        done.append(checked)
        result = checked.result
        print(f"{result.status:>10}  {checked.reading.label}: {result.states:,} distinct states, "
              f"{result.transitions:,} transitions, depth {result.max_depth}, {result.seconds:.2f} s")
        failing = [p for p in result.properties if p.status in ("violated", "unreached")]
        for prop in failing:
            print(f"{prop.status:>20}  {prop.kind:<10} {prop.name}")
        for prop in failing:
            if prop.status == "violated" and prop.counterexample is not None:
                _print_counterexample(prop, checked.model)
        if failing or result.status != "ok":
            args_text = " ".join(f"-p {shlex.quote(part)}" for part in checked.reading.assignments)
            print(f"            check it alone: steersim check {args.model} {args_text}")
    return done


def _stopped_early(result: Any, keep_going: bool) -> str:
    """Why the search left states unexplored, or "" when it explored every one."""
    limit = next((note.removeprefix("incomplete: ") for note in result.notes if note.startswith("incomplete: ")),
                 None)
    if limit is not None:
        return limit
    if result.status == "violation" and not keep_going:
        return "at the first violation; --keep-going explores every state"
    return "interrupted" if result.status not in ("ok", "violation") else ""


def _print_counterexample(prop: Any, model: Any) -> None:
    """The steps (numbered as in traces and diagrams), each with its facts and what it changed in the
    state, then the violation and its cause in one sentence."""
    from steersim.core.stateview import changes_text, path_views, view_changes

    path = prop.counterexample
    views = path_views(model, path)
    print(f"\ncounterexample for {prop.name}:")
    print(f"  initial state: {changes_text(views[0])}")
    for i, step in enumerate(path.steps):
        loop = "  <- loop starts" if path.loop_start is not None and i == path.loop_start else ""
        print(f"  {i:3}. {step.action.label()}{loop}")
        for fact in step.facts:
            print(f"         {fact}")
        changed = view_changes(views[i], views[i + 1])
        if changed:
            print(f"         state: {changes_text(changed)}")
    if path.violation is not None:
        print(f"  violated: {path.violation.message}")
    if prop.cause is not None:
        print(f"  cause: {prop.cause['summary']}")
    print()


def _progress_line(info: dict[str, Any]) -> None:
    print(f"progress: {info['seconds']:7.1f} s  states {info['states']:,}  distinct {info['distinct']:,}  "
          f"queue {info['queue']:,}  depth {info['depth']}  rate {info['rate']:,.0f}/s", file=sys.stderr, flush=True)


def _sweep_progress_line(info: dict[str, Any]) -> None:
    print(f"progress: {info['seconds']:7.1f} s  runs {info['runs']:,} of {info['seeds']:,}", file=sys.stderr,
          flush=True)


def cmd_simulate(args: argparse.Namespace) -> int:
    from steersim.simulate.executors import sweep

    _, params = _resolve(args)  # the sweep builds the model, once per process
    seeds = parse_seeds(args.seeds)
    started = time.monotonic()
    report = sweep(args.model, params, args.bug, seeds, timing_file=args.timing, max_steps=args.max_steps,
                   max_time=args.max_time, out=Path(args.out), workers=args.workers, dask=args.dask,
                   swarm=args.swarm, progress=None if args.quiet else _sweep_progress_line)
    print(report.summary_line())
    for line in report.property_lines():
        print(line)
    if report.first_trace is not None:
        print(f"first counterexample: seed {report.first_seed}, trace {report.first_trace}")
        if args.shrink:
            from steersim.simulate.shrink import shrink_file

            shrunk_at, shrunk = shrink_file(report.first_trace)
            print(f"shrunk counterexample: {len(shrunk.steps)} steps, trace {shrunk_at}")
    if args.traces:
        from steersim.simulate.executors import record_runs

        written = record_runs(report, args.timing, args.max_steps, args.max_time, args.swarm, Path(args.traces),
                              args.traces_for == "violations")
        print(f"wrote {len(written)} traces to {args.traces}")
    if report.exit_code != EXIT_INTERRUPTED:
        print(f"wall time {time.monotonic() - started:.2f} s", file=sys.stderr)
    if args.json:
        from steersim.report.formats import write_json

        write_json(args.json, report.to_json())
    return report.exit_code


def cmd_estimate(args: argparse.Namespace) -> int:
    from steersim.core.registry import get_model_spec
    from steersim.simulate.estimate import Plan
    from steersim.simulate.intervals import Sprt, check_confidence
    from steersim.simulate.queries import Violated, parse_assertion, parse_query
    from steersim.simulate.study import estimate_grid, estimate_setting, parse_axis, setting

    base = setting(args.model, get_model_spec(args.model).parse_assignments(args.param), args.bug, args.timing)
    check_confidence(args.confidence)
    sprt = None
    if args.assertion is not None:
        if args.query is not None or args.grid or args.runs is not None or args.precision is not None:
            raise UsageError("--assert decides its own number of runs and takes no QUERY, --grid, --runs or "
                             "--precision; put the query inside it, as in --assert \"P(fact:steer.rejected) < 0.1\"")
        query, op, bound = parse_assertion(args.assertion)
        sprt = Sprt(op, bound, args.indifference, args.error, args.error)
    else:
        query = parse_query(args.query or "violation")
    if args.runs is not None and args.precision is not None:
        raise UsageError("give --runs N (a fixed number of runs) or --precision W (run until the interval is "
                         "that narrow), not both")
    if args.explain and (args.grid or sprt is not None or not isinstance(query, Violated)):
        raise UsageError("--explain answers a violation query without --grid or --assert")
    if args.plot and not args.grid:
        raise UsageError("--plot draws a --grid sweep; add --grid NAME=V1,V2,...")
    if args.plot_size and not args.plot:
        raise UsageError("--plot-size sizes the --plot picture; add --plot FILE.png")
    plan = Plan(runs=args.runs or 10_000, precision=args.precision, max_runs=args.max_runs,
                first_seed=args.first_seed, confidence=args.confidence, method=args.method)
    options = {"workers": args.workers, "dask": args.dask, "max_steps": args.max_steps, "max_time": args.max_time}
    if args.grid:
        result = estimate_grid(base, parse_axis(args.grid, base), query, plan, **options)
        for line in result.lines():
            print(line)
        document = {**base.to_json(), "query": query.text, **result.to_json()}
        code = EXIT_OK if all(p.complete for p in result.points) else EXIT_INCOMPLETE
        if args.plot:
            _save_plot(result, args.plot, base, args.plot_size)
    else:
        answer = estimate_setting(base, query, plan, sprt, **options)
        lines = [answer.line()] if sprt is not None else answer.lines()
        for line in lines:
            print(line)
        document = {**base.to_json(), **answer.to_json()}
        if args.explain and sprt is None and isinstance(query, Violated) and answer.interval.bound == "upper":
            from steersim.simulate.explain import explain_no_violation

            document["explained"] = explain_no_violation(base, query.prop, Path(args.explain))
            print(document["explained"])
        if sprt is not None:
            code = {True: EXIT_OK, False: EXIT_VIOLATION, None: EXIT_INCOMPLETE}[answer.holds]
        else:
            code = EXIT_OK if answer.complete else EXIT_INCOMPLETE
    if code == EXIT_INCOMPLETE and sprt is None:
        print(f"incomplete: the interval is wider than {args.precision:g} after the run budget of {args.max_runs:,}")
    if args.json:
        from steersim.report.formats import write_json

        write_json(args.json, document)
    return code


PLOT_SIZE = (6.0, 3.5)  # inches, the default of --plot-size
PLOT_SIZE_LIMIT = 50.0  # inches a side at most: beyond it the picture is a mistake, not a slide


def plot_size(text: str) -> tuple[float, float]:
    """`--plot-size WxH`: the picture's width and height in inches, each above 0 and at most 50."""
    width, sep, height = text.lower().partition("x")
    try:
        size = (float(width), float(height)) if sep else None
    except ValueError:
        size = None
    if size is None or not all(0 < side <= PLOT_SIZE_LIMIT for side in size):
        raise argparse.ArgumentTypeError(f"takes WIDTHxHEIGHT in inches, each above 0 and at most "
                                         f"{PLOT_SIZE_LIMIT:g}, e.g. 10x5.6; not {text!r}")
    return size


def _save_plot(result: Any, path: str, base: Any, size: tuple[float, float] | None) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=size or PLOT_SIZE)
    result.plot(ax)
    ax.set_title(result.title(base), fontsize="medium")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    print(f"wrote {path}")


def cmd_replay(args: argparse.Namespace) -> int:
    from steersim.traces.trace import read_trace, replay

    trace = read_trace(args.trace)
    try:
        result = replay(trace)
    except UsageError as bad:  # the header names a model, parameters or a bug variant that cannot be built
        raise UsageError(f"trace {args.trace!r} line 1: {bad}") from None
    print(("ok: " if result.ok else "differs: ") + result.message)
    for violation in result.violations:
        print(f"violated {violation.property}: {violation.message}")
    return EXIT_OK if result.ok and not result.violations else EXIT_VIOLATION


def diagram_title(text: str) -> str:
    """`diagram --title`: one line of text (the diagram wraps it to its width)."""
    if not text.strip() or "\n" in text:
        raise argparse.ArgumentTypeError(f"takes one non-empty line of text, not {text!r}")
    return text.strip()


def step_window(text: str) -> tuple[int, int]:
    """`diagram --steps FIRST..LAST`: step numbers as a counterexample prints them, from 0, FIRST <= LAST."""
    first, sep, last = text.partition("..")
    if sep and first.strip().isdigit() and last.strip().isdigit() and int(first) <= int(last):
        return int(first), int(last)
    raise argparse.ArgumentTypeError(f"takes FIRST..LAST, two step numbers from 0 with FIRST <= LAST "
                                     f"(e.g. 10..14), not {text!r}")


def lane_names(text: str) -> list[str]:
    """`diagram --lanes user,queue`: lane names or patterns, comma-separated (checked against the trace)."""
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"takes lane names separated by commas (e.g. user,queue), not {text!r}")
    return names


def font_scale(text: str) -> float:
    """`diagram --font-scale FACTOR`: a number within the scales a diagram is drawn at."""
    from steersim.draw.diagram import FONT_SCALES

    try:
        factor = float(text)
    except ValueError:
        factor = float("nan")
    if not FONT_SCALES[0] <= factor <= FONT_SCALES[1]:
        raise argparse.ArgumentTypeError(f"takes a factor from {FONT_SCALES[0]:g} to {FONT_SCALES[1]:g} "
                                         f"(1 is the usual size; 1.5 or 2 for slides), not {text!r}")
    return factor


def cmd_diagram(args: argparse.Namespace) -> int:
    from steersim.draw.diagram import save_diagram
    from steersim.simulate.timing import TimingProfile
    from steersim.traces.trace import read_trace

    if Path(args.output).suffix.lower() not in (".svg", ".png"):
        raise UsageError(f"diagram -o {args.output}: the file must end in .svg or .png")
    timing = TimingProfile.from_file(args.timing) if args.timing else None
    report = _check_report(args.trace)
    if report is not None:
        from steersim.report.artefacts import report_path

        model, path = report_path(report, args.property, args.trace)
        save_diagram(path, args.output, model=model, params=report.get("params") or {}, bug=report.get("bug"),
                     timing=timing, seed=args.seed, width_px=args.width, state_panel=not args.no_state,
                     title=args.title, steps=args.steps, lanes=args.lanes, font_scale=args.font_scale)
        print(f"wrote {args.output} ({len(path.steps)} steps)")
        return EXIT_OK
    if args.property is not None:
        raise UsageError(f"diagram --property picks a counterexample of a check report; {args.trace!r} is a trace")
    from steersim.traces.header import header_model

    trace = read_trace(args.trace)
    save_diagram(trace, args.output, model=header_model(trace, args.trace), timing=timing, seed=args.seed,
                 width_px=args.width, state_panel=not args.no_state, title=args.title, steps=args.steps,
                 lanes=args.lanes, font_scale=args.font_scale)
    print(f"wrote {args.output} ({len(trace.steps)} steps)")
    return EXIT_OK


def _check_report(source: str) -> dict[str, Any] | None:
    """The `check --json` report in `source`, or None when it is something else (a trace, say)."""
    from steersim.report.artefacts import is_check_report

    try:
        text = Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # read_trace names the problem
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):  # JSON Lines (a trace), or no JSON: read_trace judges it
        return None
    if is_check_report(whole):
        return whole
    if isinstance(whole, dict) and "steersim" not in whole:
        raise UsageError(f"{source} is a JSON document but neither a trace nor a `check --json` report; draw a "
                         "trace (`simulate --out`, `check --traces`) or a check report (`check --json`)")
    return None


def cmd_report(args: argparse.Namespace) -> int:
    from steersim.report.artefacts import write_check_traces
    from steersim.report.html import REPORT_FILE, write_report

    spec, params, model = _build(args)
    result = write_report(spec, params, args.bug, args.output, seed=args.seed, reference=args.model)
    written = write_check_traces(result, model, args.model, params, args.bug, args.output, args.seed)
    print(f"wrote {Path(args.output) / REPORT_FILE}: {result.status}, {result.states:,} distinct states; "
          f"beside it {len(written)} traces, each with its diagram")
    return result.exit_code


def cmd_ci(args: argparse.Namespace) -> int:
    from steersim.integrations.ci import failures, load_matrix, matrix_json, matrix_junit, matrix_status, run_matrix
    from steersim.interrupts import INTERRUPTED

    outcomes = run_matrix(load_matrix(args.config))
    failed, passed = failures(outcomes), sum(o.passed for o in outcomes)
    status = matrix_status(outcomes)
    print(f"{status}: {passed} of {len(outcomes)} checks as expected, {sum(o.seconds for o in outcomes):.1f} s")
    # the plain closing line test runners print, so that CI logs read it like any test run
    print(f"ci: {passed} passed, {failed} failed")
    if args.json:
        from steersim.report.formats import write_json

        write_json(args.json, matrix_json(args.config, outcomes))
    if args.junit:
        Path(args.junit).write_text(matrix_junit(outcomes))
    return {INTERRUPTED: EXIT_INTERRUPTED, "fail": EXIT_VIOLATION}.get(status, EXIT_OK)


def cmd_audit(args: argparse.Namespace) -> int:
    from steersim.simulate.audit import audit

    _, params = _resolve(args)  # refuses an unknown bug variant before any child process starts
    if args.timing:
        from steersim.simulate.timing import TimingProfile

        TimingProfile.from_file(args.timing)  # and a bad timing profile
    result = audit(args.model, params, args.bug, parse_seeds(args.seeds), args.timing, args.max_steps)
    print(("identical: " if result.identical else "differs: ") + result.message)
    return EXIT_OK if result.identical else EXIT_VIOLATION


def cmd_explore(args: argparse.Namespace) -> int:
    from steersim.integrations.browse import Browser, path_text
    from steersim.integrations.browse_page import make_server

    if args.port > 65535:
        raise UsageError(f"explore --port {args.port}: a port is at most 65535 (0: any free port)")
    _, params, model = _build(args)
    browser = Browser(model, params, args.bug)
    start = ""
    if args.trace:
        from steersim.traces.trace import read_trace

        start = path_text(browser.trace_indices(read_trace(args.trace)))
    try:
        server = make_server(browser, args.port, start)
    except OSError as bad:
        raise UsageError(f"explore --port {args.port}: cannot listen on 127.0.0.1 ({bad.strerror}); "
                         "pick another port, or 0 for any free one") from None
    print(f"serving http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return EXIT_OK


def cmd_validate(args: argparse.Namespace) -> int:
    from steersim.harness.logcheck import run_validate

    _, params, model = _build(args)
    return run_validate(model, args.model, params, args.bug, args.logs, args.format, args.max_states, args.json,
                        args.workers, args.dask, args.report)


def _delegate(group: str) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        from steersim.core.registry import plugin

        return int(plugin(group, args.system)(list(args.rest)))

    return run


class _ShowVersion(Exception):
    """`--version` was given: `main` prints the version and stops, whatever else the line holds."""


class _VersionAction(argparse.Action):
    """Raises `_ShowVersion` as soon as argparse meets `--version`, before it asks for a command
    (argparse's own version action exits the interpreter, which `main`'s callers must not see)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        raise _ShowVersion


def version_line() -> str:
    """`steersim X.Y.Z`, from the installed package's metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return f"steersim {version('steersim')}"
    except PackageNotFoundError:
        return "steersim (version unknown: not installed; install it with `pip install -e .`)"


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="steersim", description="Model checking and simulation of mid-turn steering.")
    parser.add_argument("--debug", action="store_true",
                        help="on an internal error, print its traceback here instead of saving it to a file")
    parser.add_argument("--version", action=_VersionAction, help="print steersim's version (the determinism of "
                        "every output is promised per version)")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=ArgumentParser)

    p = sub.add_parser("models", help="list models, their parameters and bug variants")
    p.add_argument("model", nargs="*", help="only these: model names, path/to/file.py:SPEC or package.module:SPEC "
                                            "(default: every installed model)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=cmd_models)

    p = sub.add_parser("check", help="explore every interleaving and judge every property")
    _model_args(p)
    p.add_argument("--strategy", default="bfs", help="bfs (shortest counterexamples, default) or dfs")
    p.add_argument("--engine", default="auto",
                   help="generic, vector (a model's compiled kernel: same report, faster) or auto (vector "
                        "when the model has a kernel and the options allow it; the default)")
    p.add_argument("--max-states", type=positive_int, help="stop (incomplete) after this many distinct states")
    p.add_argument("--max-depth", type=non_negative_int, help="do not expand states deeper than this (incomplete)")
    p.add_argument("--timeout", type=positive_float, help="stop (incomplete) after this many seconds")
    p.add_argument("--max-memory", type=positive_float, metavar="MB", help="stop (incomplete) above this resident size")
    p.add_argument("--keep-going", action="store_true", help="judge every property, not stop at the first violation")
    p.add_argument("--no-liveness", action="store_true", help="skip eventually-properties")
    p.add_argument("--liveness-limit", type=non_negative_int, default=2_000_000,
                   help="states above which liveness is skipped")
    p.add_argument("--por", action="store_true", help="partial-order reduction over the model's local actions")
    p.add_argument("--symmetry", action="store_true", help="explore each class of interchangeable ids once")
    p.add_argument("--checkpoint", type=output_file, help="save progress to this file periodically")
    p.add_argument("--checkpoint-every", type=non_negative_float, default=60.0, metavar="S",
                   help="seconds between checkpoints")
    p.add_argument("--resume", help="continue the interrupted run saved in this checkpoint")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="explore with N processes, the states partitioned among them (the same report)")
    p.add_argument("--dask", type=dask_address, metavar="ADDRESS|local",
                   help="explore on a Dask scheduler's workers, or `local` for a 2-worker cluster (the same report)")
    p.add_argument("--graph", type=output_file,
                   help="export the state graph (.graphml or .dot; small configurations only)")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--json", type=output_file, help="write the JSON report here")
    p.add_argument("--junit", type=output_file, help="write JUnit XML here (one test case per property)")
    p.add_argument("--traces", type=output_folder, metavar="DIR",
                   help="write each counterexample and each sometimes-witness here as a trace and an SVG")
    p.add_argument("--defaults-only", action="store_true",
                   help="check the defaults alone, not also the readings the model declares (which a check "
                        "without -p or --bug explores after the defaults)")
    p.add_argument("--require-coverage", action="store_true",
                   help="fail (exit 1) when an action kind the model declares never fired")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("simulate", help="run seeds in virtual time under a timing profile")
    _model_args(p)
    _run_args(p, "0..99")
    p.add_argument("--max-time", type=positive_float, help="virtual time per run at most")
    p.add_argument("--out", type=output_folder, default="steersim-traces",
                   help="folder for the first counterexample's trace")
    p.add_argument("--json", type=output_file, help="write the JSON report here")
    p.add_argument("--workers", type=positive_int, default=1, help="local worker processes (default 1: this process)")
    p.add_argument("--dask", type=dask_address, metavar="ADDRESS|local",
                   help="run on a Dask scheduler, or `local` for a 2-worker cluster")
    p.add_argument("--swarm", action="store_true", help="each seed also turns off a random subset of environment kinds")
    p.add_argument("--shrink", action="store_true", help="also write a shrunk copy of the first counterexample")
    p.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    p.add_argument("--traces", type=output_folder, metavar="DIR", help="write every run's trace here")
    p.add_argument("--traces-for", choices=("all", "violations"), default="all",
                   help="with --traces: every run (default) or only the runs that broke a property")
    p.set_defaults(run=cmd_simulate)

    p = sub.add_parser("estimate", help="estimate a probability or a measure from simulated runs, with an interval")
    _model_args(p)
    p.add_argument("query", nargs="?", help="violation (default), violation:PROPERTY, reached:PROPERTY, "
                                            "fact:NAME [within T], measure:steer-latency, measure:steers-per-turn, "
                                            "measure:turns-per-run")
    p.add_argument("--timing", help="TOML timing profile (default: the model's own)")
    p.add_argument("--max-steps", type=non_negative_int, default=10_000, help="steps per run at most")
    p.add_argument("--max-time", type=positive_float, help="virtual time per run at most")
    p.add_argument("--runs", type=positive_int, help="run exactly this many seeds (default 10000)")
    p.add_argument("--precision", type=positive_float, metavar="W",
                   help="run until the interval is at most W wide (high - low), within --max-runs")
    p.add_argument("--max-runs", type=positive_int, default=1_000_000,
                   help="run budget of --precision and --assert (default 1000000)")
    p.add_argument("--confidence", type=positive_float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--method", default="exact", help="interval of a proportion: exact (Clopper-Pearson, default) "
                                                     "or wilson")
    p.add_argument("--first-seed", type=non_negative_int, default=0, help="seeds are this one on (default 0)")
    p.add_argument("--assert", dest="assertion", metavar="'P(QUERY) OP BOUND'",
                   help="decide a bound with Wald's SPRT: exit 0 holds, 1 fails, 3 the run budget ended first")
    p.add_argument("--indifference", type=positive_float, default=0.5, metavar="R",
                   help="SPRT indifference region: bound +- R * min(bound, 1 - bound) (default 0.5)")
    p.add_argument("--error", type=positive_float, default=0.01, metavar="E",
                   help="SPRT error rates alpha = beta = E (default 0.01)")
    p.add_argument("--grid", metavar="AXIS=V1,V2,...",
                   help="estimate at each value of a parameter (Q=1,2,3) or timing field "
                        "(timing:tool.*.median=0.5,1,2), with the same seeds at each")
    p.add_argument("--plot", type=output_file, metavar="FILE.png", help="draw the --grid estimates with their band")
    p.add_argument("--plot-size", type=plot_size, metavar="WxH",
                   help=f"size of the --plot picture in inches (default {PLOT_SIZE[0]:g}x{PLOT_SIZE[1]:g})")
    p.add_argument("--explain", type=output_folder, metavar="DIR",
                   help="when no run violates: ask the explorer, and write its counterexample, timed, here")
    p.add_argument("--json", type=output_file, help="write the JSON report here")
    p.add_argument("--workers", type=positive_int, default=1, help="local worker processes (default 1: this process)")
    p.add_argument("--dask", type=dask_address, metavar="ADDRESS|local",
                   help="run on a Dask scheduler, or `local` for a 2-worker cluster")
    p.set_defaults(run=cmd_estimate)

    p = sub.add_parser("replay", help="re-execute a trace and name the first step that differs")
    p.add_argument("trace")
    p.set_defaults(run=cmd_replay)

    p = sub.add_parser("ci", help="run the check matrix of [tool.steersim] and compare with expected verdicts")
    p.add_argument("--config", default="pyproject.toml", help="pyproject.toml or TOML file with [tool.steersim]")
    p.add_argument("--json", type=output_file, help="write the JSON report here")
    p.add_argument("--junit", type=output_file, help="write JUnit XML here (one test case per check)")
    p.set_defaults(run=cmd_ci)

    p = sub.add_parser("audit", help="run seeds twice in fresh processes and name the first difference")
    _model_args(p)
    _run_args(p, "0..49")
    p.set_defaults(run=cmd_audit)

    p = sub.add_parser("diagram", help="draw a trace or a check --json counterexample as a timing diagram")
    p.add_argument("trace", help="a trace (.jsonl) or a `check --json` report")
    p.add_argument("--property", help="of a check report: the property whose counterexample to draw "
                                      "(default: the first violated one)")
    p.add_argument("-o", "--output", type=output_file, required=True, help="FILE.svg or FILE.png")
    p.add_argument("--timing", help="TOML timing profile for an untimed trace (default: the model's own)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the times given to an untimed trace")
    p.add_argument("--width", type=positive_int, metavar="PX", help="width of a PNG in pixels (an SVG scales freely)")
    p.add_argument("--no-state", action="store_true",
                   help="leave out the panel of state changes right of the lanes (narrower, for slides)")
    p.add_argument("--title", type=diagram_title, help="the heading above the diagram (default: the model, the "
                                                       "parameters that differ from its defaults and the bug)")
    p.add_argument("--steps", type=step_window, metavar="FIRST..LAST",
                   help="draw only these steps (inclusive, numbered from 0 as printed); the steps before and "
                        "after are one row each")
    p.add_argument("--lanes", type=lane_names, metavar="NAME,...",
                   help="draw only these lanes (names or patterns such as tool:*); messages to or from the others "
                        "are left out and counted in the caption")
    p.add_argument("--font-scale", type=font_scale, default=1.0, metavar="FACTOR",
                   help="text FACTOR times its usual size (0.5 to 4), with lines, columns and labels spaced to "
                        "hold it; strokes and markers keep their size (for slides: 1.5 or 2)")
    p.set_defaults(run=cmd_diagram)

    p = sub.add_parser("report", help="write a self-contained HTML report: verdicts, counterexamples, diagrams")
    _model_args(p)
    p.add_argument("-o", "--output", type=output_folder, required=True, help="folder for index.html")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of the times given to counterexamples")
    p.set_defaults(run=cmd_report)

    p = sub.add_parser("explore", help="click through the state space in a local web page")
    _model_args(p)
    p.add_argument("--trace", help="start at the end of this trace of the model")
    p.add_argument("--port", type=non_negative_int, default=8770, help="port on 127.0.0.1 (0: any free port)")
    p.set_defaults(run=cmd_explore)

    p = sub.add_parser("validate", help="judge recorded logs: is each one a behaviour the model allows?")
    _model_args(p)
    p.add_argument("logs", nargs="+", metavar="LOG", help="recorded log files")
    p.add_argument("--format", default="facts", help="log format: facts (the core facts, default), events "
                   "(the model's own events), openai-ws-frames (a Responses WebSocket client's frames), "
                   "codex-appserver (a conform transcript), codex-rollout (a Codex rollout file), "
                   "openclaw-transcript (an OpenClaw session transcript), langgraph-records (a thread's records), "
                   "claude-code-stream (the stdout of `claude -p --output-format stream-json`) or "
                   "pydantic-ai-messages (a Pydantic AI message history, one message a line)")
    p.add_argument("--max-states", type=positive_int, default=1_000_000,
                   help="configurations searched per log at most (exit 3 when met)")
    p.add_argument("--json", type=output_file,
                   help="write a JSON report: per log its verdict, records read and the finding")
    p.add_argument("--report", type=output_folder, metavar="DIR",
                   help="write summary.md (a verdict line per log), findings.json and, for each finding, the "
                   "log's lines around its record (excerpts/)")
    p.add_argument("--workers", type=positive_int, default=1, help="judge the logs in N processes (same report)")
    p.add_argument("--dask", type=dask_address, metavar="ADDRESS|local",
                   help="judge the logs on a Dask cluster: tcp://HOST:PORT or local")
    p.set_defaults(run=cmd_validate)

    for name, group, what in (("conform", "steersim.conform", "check a real implementation against its model"),
                              ("serve", "steersim.serve", "serve a protocol as its model decides")):
        # `steersim serve --help` is this command's help; after the system, every option is the system's own
        p = sub.add_parser(name, help=what, add_help=False, description=f"{what}; `steersim {name} SYSTEM --help` "
                           "lists the options of SYSTEM")
        p.add_argument("-h", "--help", action="help", help="show this help message and exit")
        p.add_argument("system", help="the system (its model's name), e.g. openai-ws")
        p.add_argument("rest", nargs=argparse.REMAINDER, help="the system's own options")
        p.set_defaults(run=_delegate(group))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Ctrl-C, caught by the command's own loop (a partial report) or anywhere else,
    ends in the same one line and exit code."""
    from steersim.argtypes import refuse_clashes, write_failure
    from steersim.interrupts import swallowed_interrupts_redelivered

    argv = list(sys.argv[1:] if argv is None else argv)
    debug = False
    args = None
    try:
        with swallowed_interrupts_redelivered():
            args = _parse(build_parser(), argv)
            debug = args.debug
            refuse_clashes(args)
            code = args.run(args)
        sys.stdout.flush()  # so that a reader who left shows here, not as a message at exit
    except _ShowVersion:
        print(version_line())
        return EXIT_OK
    except UsageError as bad:
        print(f"steersim: error: {bad}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    except BrokenPipeError:
        _discard_stdout()
        return EXIT_BROKEN_PIPE
    except OSError as failed:  # an output that could be written when the command started, and not now
        line = write_failure(args, failed)
        if line is None:
            return _crashed(failed, argv, debug)
        print(f"steersim: error: {line}", file=sys.stderr)
        return EXIT_USAGE
    except Exception as crash:  # only here: whatever escaped every reader is steersim's own bug
        return _crashed(crash, argv, debug)
    if code == EXIT_INTERRUPTED:
        print("steersim: interrupted (Ctrl-C)", file=sys.stderr)
    return code


def _crashed(crash: BaseException, argv: Sequence[str], debug: bool) -> int:
    from steersim.crash import crash_line

    print(crash_line(crash, argv, debug), file=sys.stderr)
    return EXIT_INTERNAL


def _parse(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.Namespace:
    """`parser.parse_args`, except that estimate's QUERY may also come after the options (argparse
    gives an optional positional only the arguments next to the one before it), and that `--option=--`
    is refused: argparse reads `--` there as the end of options and hands the option an empty list."""
    for token in argv:
        name, equals, value = token.partition("=")
        if token.startswith("--") and equals and value == "--":
            parser.error(f"option {name} takes a value, not '--'")
    args, extra = parser.parse_known_args(_seeds_joined(argv))
    if extra and args.command == "estimate" and args.query is None and len(extra) == 1 \
            and not extra[0].startswith("-"):
        args.query, extra = extra[0], []
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return args


def _seeds_joined(argv: Sequence[str]) -> list[str]:
    """`--seeds -5..3` as `--seeds=-5..3`: argparse takes a value starting with `-` for the next option
    (unless it is a plain negative number), and would say only "expected one argument", where
    `parse_seeds` says what a seed range is."""
    out: list[str] = []
    for token in argv:
        if out and out[-1] == "--seeds" and token.startswith("-") and token[1:2].isdigit():
            out[-1] = f"--seeds={token}"
        else:
            out.append(token)
    return out


def _discard_stdout() -> None:
    """Point stdout at the null device, so that the interpreter's last flush of what is still buffered
    meets no closed pipe (Python's documented recipe for SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file (captured in-process): nothing is left to flush
        pass


if __name__ == "__main__":
    sys.exit(main())
