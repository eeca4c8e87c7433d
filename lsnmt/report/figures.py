"""Deterministic figures: matplotlib's Agg backend, fixed style, no timestamps in PNG or PDF.

Two runs on the same data give byte-identical files (tested): the PNG carries no ``Software`` chunk and the
PDF no creation date or producer, and every figure is drawn with the same rcParams.
"""

from __future__ import annotations

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


def pad_singular(ax: Axes) -> None:
    """Give an axis whose data hold one value (a single point, or every point at one x or y) limits around it.

    Left alone, matplotlib zooms to ±5 % of the value (a lone ∆BLEU of -0.5 got an axis from -0.525 to -0.475, as
    if it were measured to the third decimal). Linear axes get ``v ± max(1, |v| / 10)`` (one BLEU point either side
    of a score or a gain, ten percent of a perplexity or a parameter count), log axes ``[v / 2, 2 v]``. Axes
    without lines or points (a note, a text panel) are left alone."""
    if not (ax.lines or ax.collections):
        return
    lim = ax.dataLim
    ends = ((lim.x0, lim.x1, ax.get_xscale(), ax.set_xlim), (lim.y0, lim.y1, ax.get_yscale(), ax.set_ylim))
    for lo, hi, scale, set_lim in ends:
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi - lo > 1e-9 * max(1.0, abs(hi)):
            continue
        v = (lo + hi) / 2
        if scale == "log" and v > 0:
            set_lim(v / 2, v * 2)
        else:
            pad = max(1.0, abs(v) / 10)
            set_lim(v - pad, v + pad)


LABEL_PT = 6
"""Font size of a point's label (:func:`label_points`)."""
_LABELS = "_lsnmt_labels"


def label_points(ax: Axes, points: Sequence[tuple[float, float, str]]) -> None:
    """Label each ``(x, y, text)`` point of ``ax``; :func:`save` places the labels once the layout is final, each
    beside its point and moved up or down by a line at a time until it overlaps no label placed before it."""
    setattr(ax, _LABELS, [*getattr(ax, _LABELS, []), *points])


def _place_labels(ax: Axes) -> None:
    points = sorted(getattr(ax, _LABELS, []))
    if not points:
        return
    renderer = ax.figure.canvas.get_renderer()  # type: ignore[attr-defined]
    placed: list[Any] = []
    for x, y, text in points:
        for k in range(41):
            dy = LABEL_PT * 1.3 * ((k + 1) // 2) * (1 if k % 2 else -1)  # 0, +1, -1, +2, ... lines
            note = ax.annotate(text, (x, y), xytext=(3, dy - LABEL_PT / 2), textcoords="offset points",
                               fontsize=LABEL_PT, annotation_clip=False)
            box = note.get_window_extent(renderer)
            if not any(box.overlaps(b) for b in placed):
                placed.append(box)
                break
            note.remove()


def save(fig: Figure, out_dir: Path, stem: str, bottom: float = 0.0) -> tuple[Path, Path]:
    """``<stem>.png`` and ``<stem>.pdf`` under ``out_dir``, atomically and without timestamps; every axis with a
    single value gets padded limits (:func:`pad_singular`), then the layout, then the points' labels
    (:func:`label_points`). ``bottom``: the fraction of the height kept free below
    the panels (their notes, :func:`draw_panels`)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = (out_dir / f"{stem}.png", out_dir / f"{stem}.pdf")
    with matplotlib.rc_context(STYLE):
        for ax in fig.axes:
            pad_singular(ax)
        fig.tight_layout(rect=(0.0, bottom, 1.0, 1.0))
        for ax in fig.axes:
            _place_labels(ax)
        for path, fmt, meta in ((paths[0], "png", {"Software": None}),
                                (paths[1], "pdf", {"Creator": None, "Producer": None, "CreationDate": None})):
            with atomic_write(path, "wb") as f:
                fig.savefig(f, format=fmt, metadata=meta)
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
