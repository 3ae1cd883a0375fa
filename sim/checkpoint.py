"""Checkpoints of an exhaustive run, so that an interrupted check continues where it stopped.

A checkpoint holds the explorer's whole search state (visited fingerprints, parent pointers, the
frontier, verdicts so far, the liveness graph) and the identity of the run (model, parameters, bug and
the options that shape the search). It is written to a temporary file and renamed into place, so a run
killed while writing leaves the previous checkpoint intact. Resuming refuses a checkpoint of another
run, naming what differs.
"""

from __future__ import annotations

import math
import os
import pickle
from pathlib import Path
from typing import Any

from sim.errors import UsageError
from sim.visited import Frontier

VERSION = 2
SEARCH_STATE = (
    "parents", "action_index", "depths", "visited", "results", "transitions", "fired", "max_depth", "notes",
    "live_names", "track_graph", "unmet", "trigger", "terminal", "enabled", "edge_src", "edge_dst", "edge_class",
    "classes", "por", "symmetry", "packer",
)
SHAPING_OPTIONS = ("strategy", "max_depth", "keep_going", "liveness", "liveness_limit", "por", "symmetry")


def _identity(explorer: Any) -> dict[str, Any]:
    opts = explorer.options
    return {"identity": dict(opts.identity), **{name: getattr(opts, name) for name in SHAPING_OPTIONS}}


def save_checkpoint(path: str, explorer: Any, frontier: Any, seconds: float) -> None:
    explorer.live_names = [p.name for p in explorer.live]
    data = {
        "steersim-checkpoint": VERSION,
        "run": _identity(explorer),
        "seconds": seconds,
        "frontier": frontier,
        "search": {name: getattr(explorer, name) for name in SEARCH_STATE},
    }
    tmp = Path(f"{path}.tmp")
    with open(tmp, "wb") as f:
        pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def load_checkpoint(path: str, explorer: Any) -> tuple[Any, float]:
    """Restore `explorer` from `path`; returns the frontier and the seconds already spent."""
    try:
        with open(path, "rb") as f:
            data = pickle.load(f)
    except FileNotFoundError:
        raise UsageError(f"checkpoint {path!r} does not exist") from None
    except OSError as bad:
        raise UsageError(f"checkpoint {path!r} cannot be read: {bad.strerror}") from None
    except Exception as bad:  # damaged bytes make the unpickler fail in any of a dozen ways
        raise UsageError(f"checkpoint {path!r} is damaged or not a steersim checkpoint "
                         f"({type(bad).__name__}: {' '.join(str(bad).split())[:80]})") from None
    if not isinstance(data, dict) or data.get("steersim-checkpoint") != VERSION:
        raise UsageError(f"checkpoint {path!r} is not a steersim checkpoint of version {VERSION}")
    _check_layout(path, data, explorer)
    saved, wanted = data["run"], _identity(explorer)
    for key in sorted(set(saved) | set(wanted)):
        if saved.get(key) != wanted.get(key):
            raise UsageError(f"checkpoint {path!r} belongs to another run: {key} was {saved.get(key)!r}, "
                             f"now {wanted.get(key)!r}; resume with the same model, parameters and options")
    for name, value in data["search"].items():
        setattr(explorer, name, value)
    return data["frontier"], float(data["seconds"])


def _check_layout(path: str, data: dict[str, Any], explorer: Any) -> None:
    """Every part a resumed search reads, present and of the type a fresh search has, so that a damaged
    checkpoint is refused here and not met as a crash hours into the resumed run."""
    parts = {"run": dict, "search": dict, "frontier": Frontier, "seconds": (int, float)}
    for key, kind in parts.items():
        if not isinstance(data.get(key), kind) or isinstance(data.get(key), bool):
            raise UsageError(f"checkpoint {path!r} is damaged: its {key!r} is missing or of the wrong type")
    if not math.isfinite(data["seconds"]) or data["seconds"] < 0:
        raise UsageError(f"checkpoint {path!r} is damaged: its seconds {data['seconds']!r} is no time spent")
    search = data["search"]
    for name in SEARCH_STATE:
        if name not in search or type(search[name]) is not type(getattr(explorer, name)):
            raise UsageError(f"checkpoint {path!r} is damaged: its search part {name!r} is missing or of the "
                             "wrong type")
    extra = sorted(set(search) - set(SEARCH_STATE))
    if extra:
        raise UsageError(f"checkpoint {path!r} is damaged: unknown search parts {', '.join(map(repr, extra))}")
