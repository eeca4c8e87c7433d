"""The training curve as an image: ``curve.png`` beside ``curve.tsv`` (``lsnmt.train.curve``), drawn when a training
ends. DVC declares it an image plot (``dvc plots show`` copies it into its page, which needs no network for an
image) and the report shows it; the TSV stays the data.

Training loss and, where the row validated, validation loss (bits per token) against the update, and the learning
rate on a second axis. Matplotlib's Agg backend with no timestamp in the file: the same curve gives the same bytes.
Kept apart from the report's figure code so that editing the report reruns no training.
"""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

from lsnmt.io import atomic_write

STYLE: Any = {  # Any: matplotlib types rc keys as Literals, which a plain dict does not check against
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "font.size": 9,
    "font.family": "DejaVu Sans",
    "axes.grid": True,
    "grid.alpha": 0.3,
}


def read(tsv: Path) -> dict[str, list[tuple[int, float]]]:
    """``{column: [(step, value), ...]}`` of ``curve.tsv``; empty cells (a row that did not validate) left out."""
    series: dict[str, list[tuple[int, float]]] = {}
    with tsv.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            for key, value in row.items():
                if key != "step" and value:
                    series.setdefault(key, []).append((int(row["step"]), float(value)))
    return series


def draw(tsv: Path, png: Path, title: str) -> Path:
    """``png`` from ``tsv`` (module docstring), atomically; a curve with no row yet says so in the image."""
    series = read(tsv)
    with matplotlib.rc_context(STYLE):
        fig, ax = plt.subplots(figsize=(6.0, 3.4))
        try:
            for key, label in (("loss", "training loss"), ("valid_loss", "validation loss")):
                if series.get(key):
                    ax.plot(*zip(*series[key], strict=True), marker="." if key == "valid_loss" else None, label=label)
            if series.get("lr"):
                lr = ax.twinx()
                lr.plot(*zip(*series["lr"], strict=True), color="0.6", linewidth=0.8, label="learning rate")
                lr.set_ylabel("learning rate", color="0.4")
                lr.grid(False)
            if not series:
                ax.text(0.5, 0.5, "no curve row yet", ha="center", va="center", transform=ax.transAxes)
            ax.set_xlabel("update")
            ax.set_ylabel("loss (bits per token)")
            ax.set_title(title)
            if ax.lines:
                ax.legend(fontsize=7, loc="upper right")
            fig.tight_layout()
            with atomic_write(png, "wb") as fh:
                fig.savefig(fh, format="png", metadata={"Software": None})
        finally:
            plt.close(fig)
    return png
