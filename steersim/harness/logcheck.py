"""`steersim validate`: is each recorded log a behaviour the model allows, under partial observation?

This is trace validation in the manner of TLA+ (Cirstea, Kuppe, Merz et al.): the harness validator
(`steersim.harness.validate`) searches breadth-first over (model state, records explained), and here it
searches a view of the model whose steps show only what the log records. A log records the kinds of
event that occur in it; a model step whose events the log does not record is unobserved and free, so a
log that writes down only steers and turns is still judged. Configurations are deduplicated by product
state at each log position, which keeps the frontier small on long logs. A log that stops mid-turn is
explained by the prefix of a run: an unknown outcome is not a violation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from steersim.core.facts import Fact
from steersim.core.model import AdaptedModel, Event, Model, ModelBase
from steersim.core.product import Product
from steersim.errors import EXIT_INCOMPLETE, EXIT_OK, EXIT_VIOLATION, UsageError
from steersim.harness.logs import LogFormat, Record, observed_event, read_log
from steersim.harness.validate import ValidationCut, default_match, steps_with_events, validate

OFFERED_LIMIT = 12  # offered events named in a finding at most; the rest are counted
OFFER_BUDGET = 10_000  # states looked through for what the model offered where the log left it


class ObservedView(AdaptedModel):
    """The model as the log sees it: each step shows only the events (or facts) of the kinds the log
    records, as plain observed events. States are the model's own, so `render_state` still applies.
    The view judges nothing (no properties, no monitor reads its facts): validation asks only whether
    the log is a behaviour, not whether that behaviour is good."""

    def __init__(self, inner: Model | ModelBase, projection: str, kinds: Collection[str],
                 kind: Callable[[Event], str] | None = None) -> None:
        super().__init__(inner)
        self.kinds = frozenset(kinds)
        self.kind = kind
        self.projection = projection
        for hook in ("step_facts", "successor_facts", "symmetry", "vector_kernel", "judge_recorded", "is_local"):
            setattr(self, hook, None)  # each speaks of the model's steps or states as a whole; the view hides some
        if projection != "native":  # native records are the model's own events, which its own matcher reads
            self.match_event = None
        self._inner_step = as_stepper(inner)
        self.step = self._observed_step  # type: ignore[method-assign]

    def _observed_step(self, state: Any, action: Any) -> tuple[Any, Sequence[Event]] | None:
        stepped = self._inner_step(state, action)
        if stepped is None:
            return None
        nxt, events = stepped
        return nxt, tuple(self._shown(events))

    def _shown(self, events: Sequence[Event]) -> list[Event]:
        kinds = self.kinds
        if self.projection == "native":
            kind = self.kind
            if kind is not None:
                return [e for e in events if kind(e) in kinds]
            return [e for e in events if e.name in kinds]
        if self.projection == "events":
            return [observed_event(e.name, dict(e.data)) for e in events if e.name in kinds]
        inner_facts = self.inner.facts
        return [observed_event(f.name, dict(f.fields)) for e in events for f in inner_facts(e) if f.name in kinds]

    def facts(self, event: Event) -> Sequence[Fact]:
        return ()

    def properties(self) -> Sequence[Any]:
        return ()

    def monitors(self) -> Sequence[Any]:
        return ()


def as_stepper(model: Model | ModelBase) -> Any:
    """The model's `step(state, action) -> (next, events) | None`, whichever protocol it is written in."""
    return model.step if isinstance(model, ModelBase) else AdaptedModel(model).step


@dataclass(frozen=True)
class LogVerdict:
    """What one log came to: "explained", "finding" or "cut" (the search met --max-states)."""

    file: str
    verdict: str
    records: int
    configurations: int
    finding: Mapping[str, Any] | None = None
    message: str = ""

    def line(self) -> str:
        if self.verdict == "explained":
            return f"{self.file}: explained ({self.records:,} records, {self.configurations:,} configurations)"
        return self.message

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "verdict": self.verdict, "records": self.records,
                "configurations": self.configurations, "finding": self.finding, "message": self.message}


def check_log(model: Model | ModelBase, file: str, records: Sequence[Record], projection: str,
              max_states: int, kind: Callable[[Event], str] | None = None) -> LogVerdict:
    """Validate one log's records against `model`, projected as `projection` says; `kind` is the
    format's kind of record (`LogFormat.kind`), by default an event's name."""
    kinds = {r.event.name for r in records} if kind is None else {kind(r.event) for r in records}
    view = ObservedView(model, projection, kinds, kind)
    observed = [r.event for r in records]
    try:
        result = validate(view, observed, max_configurations=max_states, open_end=True)
    except ValidationCut:
        return LogVerdict(file, "cut", len(records), max_states, message=(
            f"{file}: undecided: the search met --max-states {max_states:,} configurations before explaining the "
            "log (raise --max-states, or validate a shorter log)"))
    if result.ok or result.divergence is None:
        return LogVerdict(file, "explained", len(records), result.configurations)
    return _finding(view, model, file, records, result.divergence, result.configurations)


def _finding(view: ObservedView, model: Model | ModelBase, file: str, records: Sequence[Record], divergence: Any,
             configurations: int) -> LogVerdict:
    product = Product(view, monitors=())
    path = divergence.explained
    pstate = path[-1].target if path else product.init_states()[0]
    steps = steps_with_events(product, pstate, budget=OFFER_BUDGET)
    observed = [r.event for r in records[divergence.position:]]
    # a step that records several events is atomic: name the first record no offered step reaches
    match = view.match_event or default_match
    reached = max((_prefix_matched(t.events, observed, match) for t in steps), default=0)
    explained = min(divergence.position + reached, len(records) - 1)
    record = records[explained]
    state = pstate[0]
    render = getattr(model, "render_state", None)
    shown = dict(render(state)) if render is not None else {"state": repr(state)}
    offered = sorted({_event_text(e) for t in steps for e in t.events[:1]})
    offered_text = ", ".join(offered[:OFFERED_LIMIT]) or "nothing more (the run was over)"
    if len(offered) > OFFERED_LIMIT:
        offered_text += f" and {len(offered) - OFFERED_LIMIT} more"
    message = (f"{record.where}: {record.text} is not a behaviour of the model: after the {explained} record(s) "
               f"before it the model was at {json.dumps(shown, default=str, sort_keys=True)}, where it could "
               f"next record {offered_text}")
    finding = {"file": record.file, "line": record.line, "record": record.text, "explained": explained,
               "state": shown, "offered": offered}
    return LogVerdict(file, "finding", len(records), configurations, finding, message)


def _prefix_matched(events: Sequence[Event], observed: Sequence[Event], match: Any) -> int:
    """How many of `events` match the observed records in order from the first."""
    matched = 0
    for event, record in zip(events, observed, strict=False):
        if not match(event, record):
            break
        matched += 1
    return matched


def _event_text(event: Event) -> str:
    fields = ", ".join(f"{k}={v!r}" for k, v in event.data.items())
    return f"{event.name}({fields})"


def validate_logs(model: Model | ModelBase, files: Sequence[str], fmt: LogFormat, max_states: int
                  ) -> list[LogVerdict]:
    """Every log read first (a bad one stops the command before any verdict), then each judged."""
    logs = [(file, read_log(file, fmt)) for file in files]
    return [check_log(model, file, records, fmt.projection, max_states, fmt.kind) for file, records in logs]


def validate_log(model: Model | ModelBase, path: str, format: str = "facts", max_states: int = 1_000_000
                 ) -> LogVerdict:
    """Judge one recorded log against `model`, as `steersim validate` does: its `verdict` is `explained`,
    `finding` (then `finding` holds the record's file and line, the state that explained the log before it
    and what the model offered there) or `cut` (`max_states` met). A log or format that cannot be read
    raises `UsageError` naming the file and line."""
    from steersim.harness.logs import log_format

    fmt = log_format(format)
    return check_log(model, path, read_log(path, fmt), fmt.projection, max_states, fmt.kind)


def exit_code(verdicts: Sequence[LogVerdict]) -> int:
    """1 if any log has a finding, else 3 if any was cut, else 0."""
    kinds = {v.verdict for v in verdicts}
    if "finding" in kinds:
        return EXIT_VIOLATION
    return EXIT_INCOMPLETE if "cut" in kinds else EXIT_OK


def write_json(path: str, model: str, fmt: LogFormat, verdicts: Sequence[LogVerdict]) -> None:
    report = {"model": model, "format": fmt.name, "exit": exit_code(verdicts),
              "logs": [v.to_json() for v in verdicts]}
    try:
        Path(path).write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")
    except OSError as failed:
        raise UsageError(f"--json {path}: cannot write the report ({failed.strerror}); give a writable path") from None


EXCERPT_CONTEXT = 3  # lines shown before and after a finding's record
EXCERPT_WIDTH = 400  # characters of a line shown at most in an excerpt


def excerpt_name(index: int, file: str) -> str:
    """Where the excerpt of the `index`-th log's finding goes, inside the report folder."""
    return f"excerpts/{index:03d}-{Path(file).name}.txt"


def report_files(folder: str, files: Sequence[str]) -> list[str]:
    """Every file `--report` may write, known before any log is judged (a log has one finding at most)."""
    return [str(Path(folder) / name) for name in ("summary.md", "findings.json",
                                                  *(excerpt_name(k, f) for k, f in enumerate(files, 1)))]


def excerpt(file: str, line: int) -> str:
    """The log's lines around line `line`, numbered, the record's marked with `>`."""
    try:
        lines = Path(file).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as failed:
        return f"(the log could not be read again: {failed.__class__.__name__})"
    first, last = max(1, line - EXCERPT_CONTEXT), min(len(lines), line + EXCERPT_CONTEXT)
    width = len(str(last))
    out = []
    for number in range(first, last + 1):
        text = lines[number - 1]
        if len(text) > EXCERPT_WIDTH:
            text = text[:EXCERPT_WIDTH] + f" ... ({len(text) - EXCERPT_WIDTH:,} more characters)"
        out.append(f"{'>' if number == line else ' '} {number:>{width}} | {text}")
    return "\n".join(out) + "\n"


def write_report(folder: str, model: str, fmt: LogFormat, verdicts: Sequence[LogVerdict]) -> None:
    """summary.md with a verdict line per log and each finding with its excerpt, findings.json (the
    `--json` report, each finding with the name of its excerpt) and the excerpts."""
    root = Path(folder)
    logs = []
    lines = [f"# steersim validate {model} --format {fmt.name}", "", f"Exit {exit_code(verdicts)}; "
             f"{sum(v.verdict == 'explained' for v in verdicts)} of {len(verdicts)} log(s) explained.", ""]
    details = []
    for index, verdict in enumerate(verdicts, 1):
        entry = verdict.to_json()
        if verdict.finding is None:
            lines.append(f"- {verdict.line()}")
        else:
            name = excerpt_name(index, verdict.file)
            shown = excerpt(str(verdict.finding["file"]), int(verdict.finding["line"]))
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(shown, encoding="utf-8")
            entry = {**entry, "excerpt": name}
            where = f"{verdict.finding['file']}:{verdict.finding['line']}"
            lines.append(f"- {verdict.file}: finding at {where} ([excerpt]({name}))")
            details += [f"## {where}", "", verdict.message, "", "```", shown.rstrip("\n"), "```", ""]
        logs.append(entry)
    root.mkdir(parents=True, exist_ok=True)
    (root / "summary.md").write_text("\n".join([*lines, "", *details]).rstrip("\n") + "\n", encoding="utf-8")
    report = {"model": model, "format": fmt.name, "exit": exit_code(verdicts), "logs": logs}
    (root / "findings.json").write_text(json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8")


def run_validate(model: Model | ModelBase, model_ref: str, params: Mapping[str, Any], bug: str | None,
                 files: Sequence[str], format_name: str, max_states: int, json_path: str | None,
                 workers: int = 1, dask: str | None = None, report: str | None = None) -> int:
    """The command: one line per log, the JSON report and the report folder if asked, and the exit code.
    With `workers` > 1 the logs are judged in a process pool, with `dask` on a Dask cluster (which reads
    the logs on its workers: a remote one needs them at the same paths); each worker builds the model
    once from its reference, and verdicts come back in the order of the logs, so the report is the one a
    single process writes. A report folder that would write over a log or the `--json` file is refused
    before any log is judged."""
    from steersim.argtypes import refuse_path_clashes
    from steersim.harness.logs import log_format

    if report:
        written = [("--report", path) for path in report_files(report, files)]
        refuse_path_clashes("validate", [("LOG", file) for file in files], [("--json", json_path or ""), *written])
    fmt = log_format(format_name)
    if dask is not None:
        verdicts = _on_dask(dask, model_ref, params, bug, files, fmt, max_states)
    elif workers > 1 and len(files) > 1:
        verdicts = _in_workers(model_ref, params, bug, files, fmt, max_states, workers)
    else:
        verdicts = validate_logs(model, files, fmt, max_states)
    for verdict in verdicts:
        print(verdict.line())
    if json_path:
        write_json(json_path, model_ref, fmt, verdicts)
    if report:
        try:
            write_report(report, model_ref, fmt, verdicts)
        except OSError as failed:
            raise UsageError(f"--report {report}: cannot write the report ({failed.strerror}); give a writable "
                             "folder") from None
    return exit_code(verdicts)


def _in_workers(model_ref: str, params: Mapping[str, Any], bug: str | None, files: Sequence[str], fmt: LogFormat,
                max_states: int, workers: int) -> list[LogVerdict]:
    from functools import partial

    from steersim.interrupts import worker_pool

    judge = partial(_judge_file, model_ref, tuple(sorted(params.items())), bug, fmt.name, max_states)
    with worker_pool(min(workers, len(files))) as pool:
        return _raised(pool.imap(judge, files))


def _on_dask(address: str, model_ref: str, params: Mapping[str, Any], bug: str | None, files: Sequence[str],
             fmt: LogFormat, max_states: int) -> list[LogVerdict]:
    from functools import partial

    from steersim.simulate.executors import dask_client

    judge = partial(_judge_file, model_ref, tuple(sorted(params.items())), bug, fmt.name, max_states)
    client, cluster = dask_client(address)
    try:
        return _raised(client.gather(client.map(judge, list(files), pure=False)))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _judge_file(model_ref: str, params: tuple[tuple[str, Any], ...], bug: str | None, format_name: str,
                max_states: int, file: str) -> LogVerdict | UsageError:
    """One log, in a worker: the model is built once per process (`built_model` caches it). Bad input is
    handed back, not raised, so that the worker logs no traceback and the parent says it in one line."""
    from steersim.harness.logs import log_format
    from steersim.simulate.executors import built_model

    fmt = log_format(format_name)
    try:
        return check_log(built_model(model_ref, params, bug), file, read_log(file, fmt), fmt.projection, max_states,
                         fmt.kind)
    except UsageError as bad:
        return bad


def _raised(results: Iterable[LogVerdict | UsageError]) -> list[LogVerdict]:
    """The verdicts in the order of the logs; the first bad input among them, raised."""
    verdicts = []
    for result in results:
        if isinstance(result, UsageError):
            raise result
        verdicts.append(result)
    return verdicts
