"""The JSON and JUnit forms of verdicts (design section 5). Key order is fixed, so that the same
verdicts give the same bytes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from steersim.checking.explorer import CheckResult
from steersim.interrupts import INTERRUPTED

if TYPE_CHECKING:
    from steersim.checking.readings import ReadingCheck


def check_json(result: CheckResult, params: Mapping[str, Any], bug: str | None,
               reference: str | None = None, readings: Sequence[ReadingCheck] = ()) -> dict[str, Any]:
    """The `check --json` report. `reference` is the model as the command named it (a registered name,
    path/to/file.py:SPEC, package.module:SPEC), which `diagram` builds the model from; `model` is the
    model's own name, for people. The top level is the defaults' check, as before readings existed; a
    default check adds `readings`, each reading's own check (the exit code is the worst of them all)."""
    return {
        "model": result.model,
        **({"reference": reference} if reference is not None else {}),
        "params": dict(params),
        "bug": bug,
        **_verdicts(result),
        "coverage": result.coverage.to_json(),
        **({"readings": [{**r.reading.to_json(), **_verdicts(r.result)} for r in readings]} if readings else {}),
    }


def _verdicts(result: CheckResult) -> dict[str, Any]:
    """What a check found, as the defaults' report and each reading's report both give it."""
    return {
        "status": result.status,
        "states": result.states,
        "transitions": result.transitions,
        "max_depth": result.max_depth,
        "seconds": round(result.seconds, 3),
        "notes": result.notes,
        "properties": [p.to_json() for p in result.properties],
    }


def write_json(path: str | Path, data: Any) -> None:
    Path(path).write_text(json.dumps(data, indent=2) + "\n")


def junit_xml(suite: str, cases: list[tuple[str, str, str, str]], seconds: float = 0.0,
              times: Sequence[float] | None = None, interrupted: bool = False) -> str:
    """`cases` are (name, classname, status, message): status violated/unreached fail, unknown skips;
    `times` the seconds of each case, when they were measured one by one. A suite cut short by Ctrl-C
    says so in its `status` property (JUnit has no attribute for it)."""
    failures = sum(1 for _, _, status, _ in cases if status in ("violated", "unreached", "failed"))
    skipped = sum(1 for _, _, status, _ in cases if status == "unknown")
    root = ET.Element("testsuite", name=suite, tests=str(len(cases)), failures=str(failures),
                      skipped=str(skipped), time=f"{seconds:.3f}")
    if interrupted:
        ET.SubElement(ET.SubElement(root, "properties"), "property", name="status", value=INTERRUPTED)
    for k, (name, classname, status, message) in enumerate(cases):
        case = ET.SubElement(root, "testcase", name=name, classname=classname)
        if times is not None:
            case.set("time", f"{times[k]:.3f}")
        if status in ("violated", "unreached", "failed"):
            ET.SubElement(case, "failure", message=f"{status}: {message}"[:500]).text = message
        elif status == "unknown":
            ET.SubElement(case, "skipped", message=message or "not decided")
    ET.indent(root)
    return ET.tostring(root, encoding="unicode") + "\n"


def check_junit(result: CheckResult, bug: str | None, readings: Sequence[ReadingCheck] = ()) -> str:
    """One test case per property of the check, and per property of each reading's check (named
    `property[reading]`)."""
    suite = f"steersim.{result.model}" + (f"[{bug}]" if bug else "")
    cases = _junit_cases(result, suite, "")
    for checked in readings:
        cases += _junit_cases(checked.result, suite, f"[{checked.reading.label}]")
    seconds = result.seconds + sum(checked.result.seconds for checked in readings)
    interrupted = INTERRUPTED in (result.status, *(checked.result.status for checked in readings))
    return junit_xml(suite, cases, seconds, interrupted=interrupted)


def _junit_cases(result: CheckResult, suite: str, suffix: str) -> list[tuple[str, str, str, str]]:
    cases = []
    for prop in result.properties:
        message = prop.note
        if prop.counterexample is not None and prop.counterexample.violation is not None:
            message = prop.counterexample.violation.message
            steps = "\n".join(f"  {i}. {s.action.label()}" for i, s in enumerate(prop.counterexample.steps))
            message += "\ncounterexample:\n" + steps
        elif prop.status == "unreached":
            message = f"{prop.doc}: never reached"
        cases.append((prop.name + suffix, f"{suite}.{prop.kind}", prop.status, message))
    return cases
