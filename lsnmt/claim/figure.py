"""The claim's figure from ``summary.json``: BLEU and exact match per system, bars with the 95 % interval over
seeds and sentences (``lsnmt.claim.interval``) as error bars and every seed as a dot (``lsnmt.figures``'
fixed style: deterministic files)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsnmt.figures import figure, save


def draw(summary: Mapping[str, Any], out_dir: Path, stem: str) -> tuple[Path, Path]:
    """``<stem>.png`` and ``<stem>.pdf`` under ``out_dir``."""
    systems = summary["systems"]
    names = summary["order"]  # summary.json's keys are sorted
    with figure(width=max(5.0, 1.1 * len(names) + 2), height=3.4, ncols=2) as (fig, axes):
        for ax, key, label in ((axes[0][0], "bleu", "BLEU"), (axes[0][1], "exact", "exact match (%)")):
            vals = [systems[n][key] for n in names]
            lo = [v - systems[n][f"{key}_ci"][0] for v, n in zip(vals, names, strict=True)]
            hi = [systems[n][f"{key}_ci"][1] - v for v, n in zip(vals, names, strict=True)]
            colors = ["0.6" if systems[n]["kind"] is None else f"C{i}" for i, n in enumerate(names)]
            ax.bar(range(len(names)), vals, yerr=[lo, hi], color=colors, capsize=3, alpha=0.85)
            for i, n in enumerate(names):
                seeds = [r[key] for r in systems[n]["per_seed"].values()]
                ax.plot([i] * len(seeds), seeds, "k.", markersize=4)
            ax.set_xticks(range(len(names)), names, rotation=30, ha="right")
            ax.set_ylabel(label)
            ax.set_ylim(0, 100)
        fig.suptitle(
            f"Small-scale claims, {summary['experiment']} (ours only): 95% CI over seeds and sentences, dots = seeds"
        )
        return save(fig, out_dir, stem)
