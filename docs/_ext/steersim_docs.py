"""Directives that read steersim's own files at build time, so that the pages on the real systems cannot
drift from what the code claims: `steersim-expected-violations` renders the `[[tool.steersim.check]]` entries
of pyproject.toml where the real system itself fails a check (`expect = "violation"`), and
`steersim-reproductions` lists a model's standalone reproductions with the first paragraph of each script's
own description.
"""

from __future__ import annotations

import ast
import re
import tomllib
from importlib import import_module
from pathlib import Path
from typing import Any

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective
from sphinx.util.parsing import nested_parse_to_nodes

ROOT = Path(__file__).resolve().parents[2]


def _package(model: str) -> Path:
    return ROOT / "steersim" / "models" / model.replace("-", "_")


def _first_paragraph(text: str) -> str:
    return " ".join(text.strip().split("\n\n")[0].split())


def _script_description(path: Path) -> str:
    """A Python script's docstring, or a Node script's leading `//` comment block."""
    source = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return _first_paragraph(ast.get_docstring(ast.parse(source)) or "")
    lines = []
    for line in source.splitlines():
        if not line.startswith("//"):
            break
        lines.append(line[2:].strip())
    return _first_paragraph("\n".join(lines))


def _rst_text(text: str) -> str:
    """Markdown-style inline code to reStructuredText literals, one line."""
    return re.sub(r"`([^`]+)`", r"``\1``", " ".join(text.split()))


class _ModelDirective(SphinxDirective):
    required_arguments = 1

    def _parse(self, rst: str) -> list[nodes.Node]:
        return list(nested_parse_to_nodes(self.state, rst, source=self.get_location()))


class ExpectedViolations(_ModelDirective):
    """The check-matrix entries of one model that the real system fails, with the properties and the reason."""

    def run(self) -> list[nodes.Node]:
        model = self.arguments[0]
        pyproject = ROOT / "pyproject.toml"
        self.env.note_dependency(str(pyproject))
        config = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        entries: list[dict[str, Any]] = config["tool"]["steersim"]["check"]
        found = [e for e in entries if e.get("model") == model and e.get("expect") == "violation"]
        if not found:
            return self._parse(f"No entry of the check matrix expects ``{model}`` to fail: every point holds.")
        items = []
        for entry in found:
            grid = ", ".join(f"{k}={v}" for k, v in entry.get("grid", {}).items()) or "the defaults"
            violated = ", ".join(f"``{p}``" for p in entry.get("violated", []))
            items.append(f"- at ``{grid}``: {violated}. {_rst_text(entry.get('reason', ''))}")
        return self._parse("\n".join(items))


class Reproductions(_ModelDirective):
    """The model's standalone reproductions (harness/repro/*.py, harness/node/repro/*.mjs), each described."""

    def run(self) -> list[nodes.Node]:
        harness = _package(self.arguments[0]) / "harness"
        scripts = sorted([*harness.glob("repro/*.py"), *harness.glob("node/repro/*.mjs")])
        scripts = [s for s in scripts if s.name != "__init__.py"]
        if not scripts:
            return self._parse("This system has no standalone reproduction: it has no finding against the real code.")
        items = []
        for script in scripts:
            self.env.note_dependency(str(script))
            where = script.relative_to(ROOT).as_posix()
            items.append(f"- ``{where}``: {_rst_text(_script_description(script))}")
        return self._parse("\n".join(items))


class ModelParameters(_ModelDirective):
    """A model's parameters (the readings of its system's ambiguities among them), bug variants and the
    readings its default check explores, from its `ModelSpec`, as `steersim models` prints them."""

    def run(self) -> list[nodes.Node]:
        from steersim.core.registry import get_model_spec

        spec = get_model_spec(self.arguments[0])
        rows = [f"   * - ``{p.name}``\n     - ``{p.default!r}``\n     - {_rst_text(p.doc)}" for p in spec.params]
        table = (".. list-table::\n   :header-rows: 1\n\n   * - parameter\n     - default\n     - meaning\n"
                 + "\n".join(rows))
        bugs = [f"- ``{b.name}``: {_rst_text(b.doc)}" + (f" (caught by ``{b.caught_by}``)" if b.caught_by else "")
                for b in spec.variants]
        readings = [f"- ``{reading.label}``: {_rst_text(reading.doc)}" for reading in spec.readings]
        explored = ("\n\nReadings that ``steersim check`` explores after the defaults:\n\n" + "\n".join(readings)
                    if readings else "")
        return self._parse(f"{_rst_text(spec.doc)}.\n\n{table}\n\nBug variants (``--bug``):\n\n" + "\n".join(bugs)
                           + explored)


# the fields of the systems' cause records (causes.py, rootcause.py), in the order a reader wants them
_CAUSE_FIELDS = (("how", ("explanation", "mechanism")), ("where", ("where",)),
                 ("promise", ("contract", "promise")))


class Causes(_ModelDirective):
    """The catalogue of root causes a harness names its findings by (`CAUSES` of the module given)."""

    required_arguments = 2  # the model, and the module of its harness that holds CAUSES

    def run(self) -> list[nodes.Node]:
        module = import_module(f"steersim.models.{self.arguments[0].replace('-', '_')}.harness.{self.arguments[1]}")
        self.env.note_dependency(str(module.__file__))
        causes = module.CAUSES.values() if isinstance(module.CAUSES, dict) else module.CAUSES
        items = []
        for cause in causes:
            name = next(getattr(cause, f) for f in ("id", "name", "key") if hasattr(cause, f))
            verdict = ""
            if getattr(cause, "by_design", False):
                verdict = " (by design: listed, not failing)"
            elif hasattr(cause, "documented"):
                system = getattr(module, "SYSTEM", "LangGraph")  # whose documentation the verdict cites
                verdict = (f" (contradicts {system}'s documentation)" if cause.documented
                           else " (breaks only the model's stricter reading)")
            lines = [f"``{name}``{verdict}", f"   {_rst_text(cause.title)}."]
            for label, fields in _CAUSE_FIELDS:
                text = next((getattr(cause, f) for f in fields if getattr(cause, f, "")), "")
                if text:
                    lines.append(f"   *{label}*: {_rst_text(text)}")
            items.append("\n\n".join(lines[:1]) + "\n" + "\n\n".join(lines[1:]))
        return self._parse("\n\n".join(items))


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("steersim-expected-violations", ExpectedViolations)
    app.add_directive("steersim-reproductions", Reproductions)
    app.add_directive("steersim-causes", Causes)
    app.add_directive("steersim-model", ModelParameters)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
