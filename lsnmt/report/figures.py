"""Deterministic figures: matplotlib's Agg backend, fixed style, no timestamps in PNG or PDF.

Two runs on the same data give byte-identical files (tested): the PNG carries no ``Software`` chunk and the
PDF no creation date or producer, and every figure is drawn with the same rcParams.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.figure import Figure

from lsnmt.io import atomic_write

FigStatus = Literal["reproduced", "differs", "not run"]
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


def save(fig: Figure, out_dir: Path, stem: str) -> tuple[Path, Path]:
    """``<stem>.png`` and ``<stem>.pdf`` under ``out_dir``, atomically and without timestamps."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = (out_dir / f"{stem}.png", out_dir / f"{stem}.pdf")
    with matplotlib.rc_context(STYLE):
        fig.tight_layout()
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


Draw = Callable[..., FigureOut]
