"""Byte-identical figure output.

matplotlib stamps SVGs with a date and random element ids, and renders text as glyph paths that depend
on the fonts found. With the hash salt fixed, the date left out and text kept as text, the same figure
gives the same bytes on every run, so committed artefacts only change when their content does.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping
from pathlib import Path

import matplotlib
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

FONT = "DejaVu Sans"  # ships with matplotlib, so text measures the same everywhere
COLORS = {
    "turn": "#4c72b0",
    "tool": "#dd8452",
    "steer.submitted": "#7f7f7f",
    "steer.accepted": "#1f77b4",
    "steer.applied": "#2ca02c",
    "steer.failed": "#d62728",
    "steer.rejected": "#d62728",
    "steer.unknown": "#ff9f1c",
    "violation": "#d62728",
    "cause": "#c77700",
    "open": "#8c8c8c",
    "lifeline": "#b0b0b0",
    "muted": "#6b6b6b",
    "text": "#1a1a1a",
    "path": "#d62728",
}


def new_figure(width: float, height: float) -> Figure:
    """A figure on its own Agg canvas: no pyplot, so drawing never changes a notebook's backend."""
    figure = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(figure)
    return figure


def _rc(salt: str) -> dict[str, object]:
    return {"svg.hashsalt": salt, "svg.fonttype": "none", "font.family": FONT, "path.simplify": False}


def figure_bytes(figure: Figure, fmt: str, salt: str = "steersim", metadata: Mapping[str, str] | None = None,
                 width_px: int | None = None) -> bytes:
    """The figure as SVG or PNG bytes, identical across runs. `salt` makes element ids differ between
    figures that share one HTML page; `metadata` (Title, Description, ...) goes into the file;
    `width_px` sets a PNG's width in pixels (an SVG scales freely)."""
    if fmt not in ("svg", "png"):
        raise ValueError(f"figures are written as svg or png, not {fmt!r}")
    buffer = io.BytesIO()
    with matplotlib.rc_context(_rc(salt)):
        stamp: dict[str, str | None] = {"Date": None} if fmt == "svg" else {"Software": None}
        dpi: float | str = "figure"
        if fmt == "png":
            dpi = 100 if width_px is None else width_px / figure.get_figwidth()
        figure.savefig(buffer, format=fmt, metadata={**stamp, **(metadata or {})}, dpi=dpi)
    return buffer.getvalue()


def save_figure(figure: Figure, file: str | Path, salt: str = "steersim", metadata: Mapping[str, str] | None = None,
                width_px: int | None = None) -> None:
    """Write SVG or PNG, chosen by the file's suffix."""
    fmt = Path(file).suffix.lower().lstrip(".")
    Path(file).write_bytes(figure_bytes(figure, fmt, salt, metadata, width_px))


def inline_svg(figure: Figure, salt: str) -> str:
    """The SVG element alone (no XML prolog, doctype or RDF metadata), ready to sit inside an HTML page."""
    text = figure_bytes(figure, "svg", salt).decode()
    text = re.sub(r"^.*?(?=<svg)", "", text, count=1, flags=re.S)
    return re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.S)
