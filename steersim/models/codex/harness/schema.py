"""Every recorded message against the JSON Schema the build itself prints (`codex app-server
generate-json-schema`; "the generated artifacts are guaranteed to match that version", README).

The harness's own requests are checked against `ClientRequest` (a harness that spoke the protocol wrongly
would judge Codex on its own mistake), Codex's notifications against `ServerNotification`, and the replies
to the requests the scenarios send against their `<Method>Response`. Each message is checked against the
one variant its `method` names, not against the whole union, which keeps the check fast and its errors
precise.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator
from jsonschema.exceptions import best_match

from steersim.models.codex.harness.runner import Recording

RESPONSES = {"thread/start": "ThreadStartResponse", "thread/read": "ThreadReadResponse",
             "turn/start": "TurnStartResponse", "turn/steer": "TurnSteerResponse",
             "turn/interrupt": "TurnInterruptResponse"}


def _by_method(union: dict[str, Any]) -> dict[str, Draft7Validator]:
    """One validator per variant of a `oneOf` union keyed by its `method` enum, sharing the definitions."""
    out = {}
    for variant in union["oneOf"]:
        for method in variant["properties"]["method"]["enum"]:
            out[method] = Draft7Validator({**variant, "definitions": union["definitions"]})
    return out


class ProtocolSchema:
    def __init__(self, folder: Path) -> None:
        read = lambda name: json.loads((folder / name).read_text())  # noqa: E731 - a local reader
        self.requests = _by_method(read("ClientRequest.json"))
        self.notifications = _by_method(read("ServerNotification.json"))
        self.responses = {method: Draft7Validator(read(f"v2/{name}.json")) for method, name in RESPONSES.items()}

    @classmethod
    def of(cls, binary: Path) -> ProtocolSchema:
        """The schema `binary` prints, generated offline into a temporary folder."""
        with tempfile.TemporaryDirectory(prefix="steersim-codex-schema-") as out:
            subprocess.run([str(binary), "app-server", "generate-json-schema", "--out", out], check=True,
                           capture_output=True, timeout=60)
            return cls(Path(out))

    def problems(self, recording: Recording) -> Iterator[tuple[str, str]]:
        """(where, what) for each message that its schema refuses: `where` names the direction and method."""
        methods: dict[Any, str] = {}
        for message in recording.messages:
            body = message.body
            method = body.get("method")
            if message.out:
                if "id" in body:
                    methods[body["id"]] = str(method)
                    yield from self._check(self.requests, str(method), body, "request")
                continue
            if method is not None:
                yield from self._check(self.notifications, str(method), body, "notification")
            elif "result" in body and methods.get(body.get("id")) in self.responses:
                name = methods[body["id"]]
                yield from self._check(self.responses, name, body["result"], "reply")

    @staticmethod
    def _check(table: dict[str, Draft7Validator], method: str, body: Any, kind: str) -> Iterator[tuple[str, str]]:
        validator = table.get(method)
        if validator is None:
            yield f"{kind} {method}", "the schema has no such method"
            return
        error = best_match(validator.iter_errors(body))
        if error is not None:
            path = "/".join(str(p) for p in error.absolute_path) or "(top)"
            yield f"{kind} {method} at {path}", error.message[:200]
