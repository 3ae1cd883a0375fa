"""One problem a harness saw in a real implementation: the record every `conform` and `serve` command
reports, and the one place its kinds are defined.

Each harness judges what a real system did in its own way (interleavings on a virtual-time loop, runs of
a Node driver, a live client's frames), but its findings all say the same three things first: the
property at stake, what kind of problem it is, and a sentence about it (`to_json`, the head of each
finding in a `--json` document). `signature` names the problem across runs, with ids and values
abstracted, so that one problem seen many times is reported once; the other fields are what some
harness needs to report or reproduce it and stay empty where a harness has nothing to put there.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from steersim.core.product import Transition

KINDS: dict[str, str] = {
    "monitor": "a core invariant or one of the model's own properties is broken by what the implementation did",
    "divergence": "the implementation did something the model cannot produce",
    "obligation": "the client broke an obligation the documentation puts on it",
    "malformed": "the client sent a frame the server could not read (not JSON, not an object, over the size limit)",
    "error": "the harness itself failed while judging (a bug of steersim, not of the system under test)",
    "defect": "a check failed for a catalogued root cause",
    "violation": "a check failed for a cause not in the catalogue",
    "by-design": "a check flags documented behaviour: listed, but it does not fail the run",
    "stalled": "the run stopped short (a bounded wait ran out) where the model says it goes on",
    "schema": "a message the implementation's own protocol schema refuses",
    "record": "the implementation's own records (runs, threads, checkpoints) contradict what it promises of them",
}
"""Every kind a finding may have, with its meaning. A harness that attributes its findings to causes
(OpenClaw's catalogue) turns `monitor` into `defect`, `violation` or `by-design`."""


@dataclass
class Finding:
    """`position` is the index of the first observation involved (None: the end of the run); `detail`
    what a reader needs to see the problem (the diverging field, the values expected and seen), as it
    goes into the document; `explained` the model's steps that explain the run up to it; `steps` the
    recorded steps that lead to it, as JSON; `scenario` what was run (the harness's own record),
    `scenarios` the names of every scenario that showed it, `cause` the catalogued root cause, if one
    is known."""

    property: str
    kind: str
    summary: str
    signature: str = ""
    _: KW_ONLY  # what only some harnesses have, named where it is given
    position: int | None = None
    detail: dict[str, Any] = field(default_factory=dict)
    explained: tuple[Transition, ...] = ()
    steps: list[dict[str, Any]] = field(default_factory=list)
    scenario: Any = None
    scenarios: list[str] = field(default_factory=list)
    cause: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"finding kind {self.kind!r} is not one of {', '.join(KINDS)}")

    def to_json(self) -> dict[str, Any]:
        """The head every harness's document gives a finding; each adds what it has to reproduce it."""
        return {"property": self.property, "kind": self.kind, "summary": self.summary}
