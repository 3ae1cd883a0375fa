"""The common vocabulary of steering (design section 3).

Every model, and every harness that records a real implementation, maps its native events to these
facts. The core invariants read only facts, so they are written once and judge every system alike.
"""

from __future__ import annotations

from typing import Any, NamedTuple

FACT_FIELDS: dict[str, tuple[str, ...]] = {
    "steer.submitted": ("id", "target"),
    "steer.accepted": ("id",),
    "steer.rejected": ("id", "code"),
    "steer.applied": ("id", "turn"),
    "steer.failed": ("id", "code"),
    "steer.unknown": ("id",),
    "turn.started": ("turn", "chain"),
    "turn.ended": ("turn", "status"),
    "tool.requested": ("call", "turn"),
    "tool.started": ("call",),
    "tool.result": ("call", "synthetic"),
    "history.appended": ("chain", "item"),
}
"""Each fact's fields, in the order its constructor below gives them (the monitors may read by position)."""

FACT_NAMES = tuple(FACT_FIELDS)


class Fact(NamedTuple):
    """One fact: a name from FACT_NAMES and its fields, in the fixed order of its constructor. A named
    tuple, so building and comparing facts on every step costs little."""

    name: str
    fields: tuple[tuple[str, Any], ...]

    def get(self, key: str) -> Any:
        """The value of field `key`."""
        for k, v in self.fields:
            if k == key:
                return v
        raise KeyError(key)

    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        """`fact["id"]` reads a field; an integer index still reads the tuple."""
        return self.get(key) if isinstance(key, str) else tuple.__getitem__(self, key)

    def to_json(self) -> dict[str, Any]:
        return {"fact": self.name, **dict(self.fields)}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Fact:
        name = obj.get("fact")
        if name not in FACT_NAMES:
            raise ValueError(f"unknown fact {name!r}; known facts: {', '.join(FACT_NAMES)}")
        return cls(name, tuple((k, v) for k, v in obj.items() if k != "fact"))

    def __str__(self) -> str:
        return f"{self.name}({', '.join(f'{k}={v!r}' for k, v in self.fields)})"


def steer_submitted(id: str, target: str) -> Fact:
    return Fact("steer.submitted", (("id", id), ("target", target)))


def steer_accepted(id: str) -> Fact:
    return Fact("steer.accepted", (("id", id),))


def steer_rejected(id: str, code: str) -> Fact:
    return Fact("steer.rejected", (("id", id), ("code", code)))


def steer_applied(id: str, turn: str) -> Fact:
    return Fact("steer.applied", (("id", id), ("turn", turn)))


def steer_failed(id: str, code: str) -> Fact:
    return Fact("steer.failed", (("id", id), ("code", code)))


def steer_unknown(id: str) -> Fact:
    return Fact("steer.unknown", (("id", id),))


def turn_started(turn: str, chain: str) -> Fact:
    return Fact("turn.started", (("turn", turn), ("chain", chain)))


def turn_ended(turn: str, status: str) -> Fact:
    return Fact("turn.ended", (("turn", turn), ("status", status)))


def tool_requested(call: str, turn: str) -> Fact:
    return Fact("tool.requested", (("call", call), ("turn", turn)))


def tool_started(call: str) -> Fact:
    return Fact("tool.started", (("call", call),))


def tool_result(call: str, synthetic: bool) -> Fact:
    return Fact("tool.result", (("call", call), ("synthetic", synthetic)))


def history_appended(chain: str, item: str) -> Fact:
    return Fact("history.appended", (("chain", chain), ("item", item)))


class FactError(ValueError):
    """An event that cannot be read as a fact of the vocabulary. The message reads after "<action> emitted"."""


def fact_problem(fact: object) -> str | None:
    """What is wrong with `fact` as a fact of the vocabulary, to be read after "<action> emitted" (None
    when nothing is): not a Fact, an unknown name (a misspelling, say), or fields other than the
    vocabulary's, in its order. The product asks this of every fact a model emits, so that a slip surfaces
    where it is made, not later as a puzzling monitor verdict."""
    if not isinstance(fact, Fact):
        return (f"{fact!r}, which is not a steersim.core.facts.Fact "
                "(build facts with the constructors of steersim.core.facts)")
    wanted = FACT_FIELDS.get(fact.name)
    if wanted is None:
        return f"unknown fact {fact.name!r}; known facts: {', '.join(FACT_NAMES)}"
    given = tuple(key for key, _ in fact.fields)
    if given != wanted:
        return f"fact {fact.name!r} with fields ({', '.join(given)}), but it takes ({', '.join(wanted)}), in that order"
    return None
