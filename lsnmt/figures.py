"""Deterministic figures: matplotlib's Agg backend, fixed style, no timestamps in PNG or PDF.

Two runs on the same data give byte-identical files (tested): the PNG carries no ``Software`` chunk and the
PDF no creation date or producer, and every figure is drawn with the same rcParams.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from lsnmt.io import atomic_write

FigStatus = Literal["reproduced", "differs", "ours", "not run"]
"""``ours``: our numbers drawn where the paper prints none to compare them with."""
STYLE = {"figure.dpi": 100, "savefig.dpi": 100, "font.size": 9, "font.family": "DejaVu Sans",
         "axes.grid": True, "grid.alpha": 0.3, "svg.hashsalt": "lsnmt", "pdf.compression": 6,
         "path.simplify": True}


@dataclass(frozen=True)
class FigureOut:
    """A written figure: paper, number, caption, status and the files (relative to ``reports/``)."""

    paper: str
    name: str
    caption: str
    status: FigStatus
    files: tuple[str, ...]


@contextmanager
def figure(*, width: float = 6.0, height: float = 3.6, ncols: int = 1, nrows: int = 1) -> Iterator[tuple]:
    """A new figure and its axes under the fixed style; closed afterwards."""
    with matplotlib.rc_context(STYLE):
        fig, axes = plt.subplots(nrows, ncols, figsize=(width, height), squeeze=False)
        try:
            yield fig, axes
        finally:
            plt.close(fig)


def singular_limits(lo: float, hi: float, scale: str) -> tuple[float, float] | None:
    """Limits around data holding one value (``lo == hi``), or ``None`` for data that spread (:func:`pad_singular`)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo > 1e-9 * max(1.0, abs(hi)):
        return None
    v = (lo + hi) / 2
    if scale == "log" and v > 0:
        return v / 2, v * 2
    pad = max(1.0, abs(v) / 10)
    return v - pad, v + pad


def _ends(ax: Axes) -> list[tuple[str, float, float, str, Callable[..., Any]]]:
    lim = ax.dataLim
    return [("x", lim.x0, lim.x1, ax.get_xscale(), ax.set_xlim), ("y", lim.y0, lim.y1, ax.get_yscale(), ax.set_ylim)]


def pad_singular(ax: Axes) -> None:
    """Give an axis whose data hold one value (a single point, or every point at one x or y) limits around it.

    Left alone, matplotlib zooms to ±5 % of the value (a lone ∆BLEU of -0.5 got an axis from -0.525 to -0.475, as
    if it were measured to the third decimal). Linear axes get ``v ± max(1, |v| / 10)`` (one BLEU point either side
    of a score or a gain, ten percent of a perplexity or a parameter count), log axes ``[v / 2, 2 v]``. Axes
    without lines or points (a note, a text panel) are left alone."""
    if not (ax.lines or ax.collections):
        return
    for _, lo, hi, scale, set_lim in _ends(ax):
        if (limits := singular_limits(lo, hi, scale)) is not None:
            set_lim(*limits)


_SPAN = "_lsnmt_min_span"


def min_span(ax: Axes, span: float, *, axis: Literal["x", "y"] = "y", lo: float | None = None,
             hi: float | None = None) -> None:
    """Ask :func:`save` to show at least ``span`` of ``axis`` around the data, within ``[lo, hi]``: a quantity whose
    spread across the plot is smaller than what it can vary by (mixing weights of 0.32-0.35 on a 0-1 scale) is not
    zoomed into, which would draw noise as structure. Data that spread wider keep matplotlib's limits."""
    setattr(ax, f"{_SPAN}_{axis}", (span, lo, hi))


def span_limits(lo: float, hi: float, asked: tuple[float, float | None, float | None]) -> tuple[float, float] | None:
    """:func:`min_span`'s limits for data from ``lo`` to ``hi``: ``span`` wide, centred on the data and moved inside
    the bounds; ``None`` when the data spread at least ``span``."""
    span, floor, ceiling = asked
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo >= span:
        return None
    start = (lo + hi - span) / 2
    start = min(start, ceiling - span) if ceiling is not None else start
    start = max(start, floor) if floor is not None else start
    return start, start + span


def pad_flat(ax: Axes) -> None:
    """The limits :func:`save` gives each axis of ``ax``: those :func:`min_span` asked for where the data spread
    less than that, else :func:`pad_singular`'s around a single value; axes without data are left alone."""
    if not (ax.lines or ax.collections):
        return
    for axis, lo, hi, scale, set_lim in _ends(ax):
        asked = getattr(ax, f"{_SPAN}_{axis}", None)
        limits = span_limits(lo, hi, asked) if asked else None
        limits = limits or (None if asked else singular_limits(lo, hi, scale))
        if limits is not None:
            set_lim(*limits)


LABEL_PT = 6
"""Font size of a point's label (:func:`label_points`)."""
_LABELS = "_lsnmt_labels"


def label_points(ax: Axes, points: Sequence[tuple[float, float, str]]) -> None:
    """Label each ``(x, y, text)`` point of ``ax``; :func:`save` places the labels once the layout is final
    (:func:`place_labels`)."""
    setattr(ax, _LABELS, [*getattr(ax, _LABELS, []), *points])


def marker_boxes(ax: Axes, pad: float = 0.0) -> list[Bbox]:
    """The box of every marker of ``ax`` on the canvas: a square of the marker's size around its centre (scatter
    points and a line's vertices), ``pad`` points wider on every side."""
    boxes = []
    scale = ax.figure.dpi / 72
    for coll in ax.collections:
        sizes = coll.get_sizes()
        for i, (x, y) in enumerate(ax.transData.transform(coll.get_offsets())):
            half = (math.sqrt(sizes[i % len(sizes)] if len(sizes) else 36.0) / 2 + pad) * scale
            boxes.append(Bbox([[x - half, y - half], [x + half, y + half]]))
    for line in ax.lines:
        half = (line.get_markersize() / 2 + pad) * scale
        for x, y in ax.transData.transform(line.get_xydata()):
            boxes.append(Bbox([[x - half, y - half], [x + half, y + half]]))
    return boxes


def place_labels(ax: Axes) -> list[Any]:
    """Draw :func:`label_points`' labels so that none overlaps another label or any point of ``ax`` and each stays
    inside the axes: adjustText (Flyamer, ``adjustText``) moves them apart from each other and from every marker,
    a thin line joins a moved label to its point. Returns the labels (their ``Text`` artists)."""
    from adjustText import adjust_text  # the report's only user: imported where used

    points = sorted(getattr(ax, _LABELS, []))
    if not points:
        return []
    texts = [ax.text(x, y, text, fontsize=LABEL_PT, ha="left", va="bottom") for x, y, text in points]
    to_data = ax.transData.inverted()  # adjustText maps a Bbox it is given from data to display coordinates
    markers = [Bbox(to_data.transform(b.get_points())) for b in marker_boxes(ax, pad=2.0)]
    adjust_text(texts, objects=markers, ax=ax, ensure_inside_axes=True, expand=(1.1, 1.3),
                iter_lim=1000, arrowprops={"arrowstyle": "-", "color": "0.5", "lw": 0.5})
    return texts


META = {"png": {"Software": None}, "pdf": {"Creator": None, "Producer": None, "CreationDate": None}}
"""Metadata left out of each format (no timestamp, no version): the bytes depend on the data alone."""


def save(fig: Figure, out_dir: Path, stem: str, bottom: float = 0.0) -> tuple[Path, Path]:
    """``<stem>.png`` and ``<stem>.pdf`` under ``out_dir``, atomically and without timestamps; every axis with a
    single value, or a spread below the span its drawer asked for (:func:`pad_flat`), gets padded limits, then the
    layout, then the points' labels (:func:`label_points`). ``bottom``: the fraction of the height kept free below
    the panels (their notes, :func:`draw_panels`)."""
    png, pdf = save_as(fig, out_dir, stem, ("png", "pdf"), bottom)
    return png, pdf


def save_as(fig: Figure, out_dir: Path, stem: str, formats: Sequence[str], bottom: float = 0.0) -> list[Path]:
    """:func:`save` in the given ``formats`` (``png``, ``pdf``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = [out_dir / f"{stem}.{fmt}" for fmt in formats]
    with matplotlib.rc_context(STYLE):
        for ax in fig.axes:
            pad_flat(ax)
        fig.tight_layout(rect=(0.0, bottom, 1.0, 1.0))
        for ax in fig.axes:
            place_labels(ax)
        for path, fmt in zip(paths, formats, strict=True):
            with atomic_write(path, "wb") as f:
                fig.savefig(f, format=fmt, metadata=META[fmt])
    return paths


NOTE_PT = 8
"""Font size of a "not run" note."""


def not_run_panel(ax, what: str) -> None:
    """An empty panel that says what is missing (never a made-up curve), wrapped to the panel's own width
    (matplotlib's ``wrap=True`` wraps to the figure's, so a note spilled over its neighbours), without a frame."""
    width_in = ax.get_position().width * ax.figure.get_figwidth()
    chars = max(10, int(width_in * 72 / (NOTE_PT * 0.62)) - 2)  # ~0.6 em per character of sans-serif
    ax.text(0.5, 0.5, textwrap.fill(f"not run: {what}", chars), ha="center", va="center", transform=ax.transAxes,
            fontsize=NOTE_PT, color="0.35")
    for spine in ax.spines.values():
        spine.set_visible(False)
    ax.set_xticks([])
    ax.set_yticks([])


LINE_IN = NOTE_PT * 1.5 / 72
"""Height of one note line (inches)."""


@dataclass(frozen=True)
class Panel:
    """One panel of a figure: ``draw(ax)`` plots it, or, with ``draw`` ``None``, ``note`` says in one line what is
    missing (a run not made, numbers the paper does not print) and no axes are drawn for it."""

    note: str
    draw: Callable[[Axes], Any] | None = None


def draw_panels(panels: Sequence[Panel], out_dir: Path, stem: str, *, ncols: int, panel_w: float = 4.2,
                panel_h: float = 3.0) -> tuple[Path, Path]:
    """Draw the panels that have data on a grid of at most ``ncols`` columns, in order, and list the others below
    it, one line each ("not run: ..."); with none to draw, the figure is those lines alone (no empty axes)."""
    shown = [p for p in panels if p.draw is not None]
    notes = [f"not run: {p.note}" for p in panels if p.draw is None]
    cols = max(1, min(ncols, len(shown)))
    rows = math.ceil(len(shown) / cols)
    foot = LINE_IN * len(notes) + (0.15 if notes else 0.0)
    text_w = max((len(n) for n in notes), default=0) * NOTE_PT * 0.62 / 72 + 0.3  # ~0.6 em per character
    width, height = max(panel_w * cols if shown else 0.0, text_w, 3.0), panel_h * rows + foot
    with matplotlib.rc_context(STYLE):
        fig = plt.figure(figsize=(width, height))
        try:
            for i, panel in enumerate(shown):
                assert panel.draw is not None
                panel.draw(fig.add_subplot(rows, cols, i + 1))
            for j, line in enumerate(notes):
                y = (foot - 0.1 - LINE_IN * (j + 0.5)) / height
                fig.text(0.01, y, line, fontsize=NOTE_PT, color="0.35", va="center")
            return save(fig, out_dir, stem, bottom=foot / height if shown else 0.0)
        finally:
            plt.close(fig)


Draw = Callable[..., FigureOut]


def save_png(fig: Figure, path: Path) -> None:
    """Write the figure atomically, with no software tag or timestamp in the PNG metadata."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    with atomic_write(path, "wb", encoding=None) as fh:
        fh.write(buf.getvalue())


def save_pdf(fig: Figure, path: Path) -> None:
    """The same figure as PDF, without creation date or producer (byte-identical across runs)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="pdf", metadata={"Creator": None, "Producer": None, "CreationDate": None})
    with atomic_write(path, "wb", encoding=None) as fh:
        fh.write(buf.getvalue())
