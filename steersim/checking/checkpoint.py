"""Checkpoints of an exhaustive run, so that an interrupted check continues where it stopped.

A checkpoint holds the explorer's whole search state (visited states, parent pointers, the
frontier, verdicts so far, the liveness graph) and the identity of the run (model, parameters, bug, a
digest of the model's source (`steersim.checking.source`) and the options that shape the search).
The file is

    steersim-checkpoint 5\\n
    <BLAKE2b-256 of the rest, in hex>\\n
    <the identity, one JSON line>\\n
    <the search state, pickled>

The digest is verified before anything is unpickled, so a flipped bit or a truncated file is refused
instead of resumed into a false verdict; the identity is compared next, so a checkpoint of another run
is refused naming what differs. (The digest guards against damage, not against a forged file: a
checkpoint is trusted input, as a script is.)

A checkpoint is written to a temporary file in the target's directory, synced and renamed into place,
so a run killed while writing leaves the previous checkpoint intact. The target must be a regular file
or not exist yet: a device, a directory, a FIFO or a symbolic link is refused before the search starts
(replacing a link would break it, and writing through it would put the checkpoint somewhere else).
"""

from __future__ import annotations

import json
import math
import os
import pickle
import stat
import tempfile
from hashlib import blake2b
from pathlib import Path
from typing import Any

from steersim.checking.visited import Frontier
from steersim.errors import UsageError

VERSION = 5  # 5: the run's identity has the digest of the model's source
MAGIC = f"steersim-checkpoint {VERSION}\n".encode()
DIGEST_SIZE = 32
SEARCH_STATE = (
    "parents", "action_index", "depths", "visited", "results", "transitions", "fired", "max_depth", "notes",
    "live_names", "track_graph", "unmet", "trigger", "terminal", "enabled", "edge_src", "edge_dst", "edge_class",
    "classes", "por", "symmetry",
)
SHAPING_OPTIONS = ("strategy", "max_depth", "keep_going", "liveness", "liveness_limit", "por", "symmetry")


def _identity(explorer: Any) -> dict[str, Any]:
    """What a checkpoint must match to be resumed, as JSON gives it back (so saved and wanted compare)."""
    opts = explorer.options
    identity = {"model": explorer.model.name, "identity": dict(opts.identity),
                **{name: getattr(opts, name) for name in SHAPING_OPTIONS}}
    return json.loads(json.dumps(identity, sort_keys=True, default=repr))


def check_checkpoint_target(path: str) -> None:
    """Refuse a checkpoint target that a checkpoint must not replace, or whose folder cannot take one:
    called before the search starts, so that no work is lost to a bad path."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as bad:
        raise UsageError(f"--checkpoint {path}: cannot be examined ({bad.strerror})") from None
    if mode is not None and not stat.S_ISREG(mode):
        kind = ("a symbolic link" if stat.S_ISLNK(mode) else "a directory" if stat.S_ISDIR(mode)
                else "not a regular file")
        raise UsageError(f"--checkpoint {path}: it is {kind}, and a checkpoint replaces only a regular file; "
                         "give a new file name")
    folder = Path(path).parent
    if not folder.is_dir():
        raise UsageError(f"--checkpoint {path}: folder {str(folder)!r} does not exist; create it first")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--checkpoint {path}: folder {str(folder)!r} is not writable")


def save_checkpoint(path: str, explorer: Any, frontier: Any, seconds: float) -> None:
    explorer.live_names = [p.name for p in explorer.live]
    data = {"seconds": seconds, "frontier": frontier,
            "search": {name: getattr(explorer, name) for name in SEARCH_STATE}}
    body = (json.dumps(_identity(explorer), sort_keys=True).encode() + b"\n"
            + pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
    digest = blake2b(body, digest_size=DIGEST_SIZE).hexdigest().encode()
    check_checkpoint_target(path)  # again: the target may have changed since the run started
    target = Path(path)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        os.fchmod(fd, _file_mode())
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + digest + b"\n" + body)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _sync_folder(target.parent)


def _file_mode() -> int:
    """The mode an ordinary new file gets (a temporary file starts private)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (where the system lets a folder be synced)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _read(path: str) -> bytes:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            raise UsageError(f"checkpoint {path!r} is not a regular file")
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise UsageError(f"checkpoint {path!r} does not exist") from None
    except OSError as bad:
        raise UsageError(f"checkpoint {path!r} cannot be read ({bad.strerror})") from None


def load_checkpoint(path: str, explorer: Any) -> tuple[Any, float]:
    """Restore `explorer` from `path`; returns the frontier and the seconds already spent."""
    raw = _read(path)
    if not raw.startswith(MAGIC):
        raise UsageError(_not_readable(path, raw.split(b"\n", 1)[0][:40]))
    digest, _, body = raw[len(MAGIC):].partition(b"\n")
    if blake2b(body, digest_size=DIGEST_SIZE).hexdigest().encode() != digest:
        raise UsageError(f"checkpoint {path!r} is damaged: its checksum does not match its contents "
                         "(a truncated or altered file); start the run again")
    identity_line, _, payload = body.partition(b"\n")
    try:
        saved = json.loads(identity_line)
    except (UnicodeDecodeError, ValueError):
        saved = None
    if not isinstance(saved, dict):
        raise UsageError(f"checkpoint {path!r} is damaged: its identity line is not a JSON object")
    wanted = _identity(explorer)
    was, now = (saved.get("identity") or {}), wanted["identity"]
    if isinstance(was, dict) and was.get("model") == now.get("model") and was.get("source") != now.get("source"):
        raise UsageError(f"checkpoint {path!r} was written by another version of the model's source (the code of "
                         f"{now.get('model')!r} changed since); resume with the model's source as it was, or start "
                         "the run again")
    for key in sorted(set(saved) | set(wanted)):
        if saved.get(key) != wanted.get(key):
            raise UsageError(f"checkpoint {path!r} belongs to another run: {key} was {saved.get(key)!r}, "
                             f"now {wanted.get(key)!r}; resume with the same model, parameters and options")
    try:
        data = pickle.loads(payload)
    except Exception as bad:  # bytes that pass the checksum yet do not unpickle: another steersim wrote them
        raise UsageError(f"checkpoint {path!r} was written by an incompatible steersim "
                         f"({type(bad).__name__}: {' '.join(str(bad).split())[:80]})") from None
    _check_layout(path, data, explorer)
    for name, value in data["search"].items():
        setattr(explorer, name, value)
    return data["frontier"], float(data["seconds"])


def _not_readable(path: str, first: bytes) -> str:
    """Why a file without this version's first line is not resumed: an older or a newer format (by its
    version number), or no checkpoint at all."""
    name, _, number = first.decode("ascii", "replace").partition(" ")
    if name != "steersim-checkpoint":
        return f"checkpoint {path!r} is not a steersim checkpoint"
    version = int(number) if number.isdigit() else None
    if version is not None and version > VERSION:
        return (f"checkpoint {path!r} is of format version {version}, newer than this steersim reads ({VERSION}); "
                "resume it with the newer steersim that wrote it, or start the run again")
    return (f"checkpoint {path!r} is of an older format ({number or '?'}); this steersim reads version {VERSION} "
            "(start the run again)")


def _check_layout(path: str, data: dict[str, Any], explorer: Any) -> None:
    """Every part a resumed search reads, present and of the type a fresh search has, so that a damaged
    checkpoint is refused here and not met as a crash hours into the resumed run."""
    parts = {"search": dict, "frontier": Frontier, "seconds": (int, float)}
    if not isinstance(data, dict):
        raise UsageError(f"checkpoint {path!r} is damaged: its search state is not a table")
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
