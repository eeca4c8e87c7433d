"""x-elm (Blevins et al. 2024) tables and figures bound to the x-elm stages' outputs (``results/{exp}/xelm/eval``):
Table 1 (per-language perplexity of the dense model, TF-IDF top-1 / ensemble and typology experts), Figure 2
(typology hierarchy, ``cluster/typology/hierarchy.json``), Figure 3 (perplexity vs number of experts) and
Figure 4 (gain vs training tokens).

Paper scale is ``mc4_xelm``; our single budget fills the 10.5B-token columns, the 21.0B ones and the XGLM column
(the original XGLM-1.7B, which the paper branches from and we cannot download here) stay "not run". Perplexity
matches within 5% count as reproduced. Tables 2, 3 and the appendix tables are not bound yet.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from lsnmt.report.cells import Kind, Row, Selector
from lsnmt.report.figures import FigureOut, figure, not_run_panel, save
from lsnmt.report.runs import Results, Run
from lsnmt.report.table import Binding


def _tsv(run: Run | None, name: str) -> list[dict[str, str]] | None:
    path = None if run is None else run.root / "xelm" / "eval" / name
    if path is None or not path.is_file():
        return None
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


@dataclass(frozen=True, kw_only=True)
class Table1(Selector):
    """Per-language perplexity of one model family from ``eval/table1.tsv`` (row ``row.arg``: a language
    code or ``avg``)."""

    column: str = "dense"
    kind: Kind = "ppl"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        rows = _tsv(run, "table1.tsv")
        for r in rows or []:
            if r["lang"] == row.arg:
                return float(r[self.column])
        return None


_COLS = {"Dense": "dense", "TF-IDFtop1": "tfidf_top1", "TF-IDFens": "tfidf_ens", "Typ.": "typology"}
_LANGS = ["AR", "BG", "DE", "EL", "EN", "ES", "FR", "HI", "JA", "KO", "RU", "SW", "TR", "UR", "VI", "ZH"]

def describe(exp) -> str:  # noqa: ANN001
    """Caption line of an x-elm run: the LM's size and budgets, not the translation model's."""
    x = exp.xelm
    if x is None:
        return f"experiment `{exp.name}`: no x-elm section"
    return (f"experiment `{exp.name}`: x-elm LM on {len(x.languages)} languages ({', '.join(x.languages)}), "
            f"{x.lm.embed_dim}/{x.lm.ffn_dim}, {x.lm.layers} layers; seed LM {x.seed.updates:,} updates, experts "
            f"k={list(x.experts.k)} with {x.experts.updates:,} updates each")


BINDINGS = {
    ("xelm", "table1"): Binding(
        "xelm", "table1", "mc4_xelm", describe=describe,
        rows={**{lang: Row("xelm", arg=lang.lower()) for lang in _LANGS}, "Avg.": Row("xelm", arg="avg")},
        columns={f"10.5B Training Tokens / {printed}": Table1(column=ours) for printed, ours in _COLS.items()}),
}


def _hierarchy(run: Run | None) -> dict | None:
    return None if run is None else run.json("xelm/cluster/typology/hierarchy.json")


def fig2(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    del paper_dir
    ours, dflt = _hierarchy(results.run("mc4_xelm")), _hierarchy(results.run("default"))
    with figure(width=10.0, height=3.8, ncols=2) as (fig, axes):
        for ax, h, title in ((axes[0][0], ours, "ours: mc4_xelm"), (axes[0][1], dflt, "embedded default")):
            if not h:
                not_run_panel(ax, f"{title}: typology clustering")
                continue
            rounds = h["rounds"]
            for y, r in enumerate(rounds):
                ax.text(0.0, y, f"k={r['k']}: " + "  |  ".join(" ".join(c) for c in r["clusters"]), fontsize=7,
                        va="center")
            ax.set_ylim(-0.5, len(rounds) - 0.5)
            ax.set_xlim(0, 1)
            ax.axis("off")
            ax.set_title(f"{title} ({h.get('feature_set', '')}, {h.get('linkage', '')} linkage)", fontsize=8)
        files = save(fig, out_dir / "xelm", "figure2")
    return FigureOut("xelm", "Figure 2", "Typology hierarchy: languages merged greedily by URIEL distance between "
                     "cluster centroids, one line per round", "ours" if ours else "not run",
                     tuple(str(p.relative_to(out_dir.parent)) for p in files))


def _fig3_points(run: Run | None) -> dict[str, list[tuple[int, float]]]:
    rows = _tsv(run, "figure3.tsv") or []
    acc: dict[tuple[str, int], list[float]] = {}
    for r in rows:
        acc.setdefault((r["method"], int(r["k"])), []).append(float(r["ppl"]))
    out: dict[str, list[tuple[int, float]]] = {}
    for (method, k), v in sorted(acc.items()):
        out.setdefault(method, []).append((k, sum(v) / len(v)))
    return out


def fig3(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    del paper_dir
    ours, dflt = _fig3_points(results.run("mc4_xelm")), _fig3_points(results.run("default"))
    with figure(width=10.0, height=3.4, ncols=2) as (fig, axes):
        for ax, pts, title in ((axes[0][0], ours, "ours: mc4_xelm"),
                               (axes[0][1], dflt, "embedded default (NOT comparable)")):
            if not pts:
                not_run_panel(ax, title)
                continue
            for method, xy in pts.items():
                ax.plot([k for k, _ in xy], [p for _, p in xy], marker="o", label=method)
            ax.set_xlabel("number of experts k")
            ax.set_ylabel("average perplexity")
            ax.set_title(title, fontsize=9)
            ax.legend(fontsize=7)
        files = save(fig, out_dir / "xelm", "figure3")
    return FigureOut("xelm", "Figure 3", "Average perplexity vs number of experts k (the paper prints no numbers)",
                     "ours" if ours else "not run", tuple(str(p.relative_to(out_dir.parent)) for p in files))


def fig4(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    del paper_dir
    got = {name: _tsv(results.run(name), "figure4.tsv") for name in ("mc4_xelm", "default")}
    with figure(width=10.0, height=3.4, ncols=2) as (fig, axes):
        for ax, name in ((axes[0][0], "mc4_xelm"), (axes[0][1], "default")):
            rows = got[name]
            if not rows:
                not_run_panel(ax, f"experiment {name}")
                continue
            x = [float(r["train_tokens"]) for r in rows]
            ax.scatter(x, [float(r["gain_vs_seed"]) for r in rows], marker="o", label="vs seed LM")
            ax.scatter(x, [float(r["gain_vs_dense"]) for r in rows], marker="^", label="vs dense")
            for r, xi in zip(rows, x, strict=True):
                ax.annotate(r["lang"], (xi, float(r["gain_vs_dense"])), fontsize=6)
            ax.set_xscale("log")
            ax.set_xlabel("training tokens")
            ax.set_ylabel("perplexity gain (typology experts)")
            ax.set_title(name if name != "default" else "embedded default (NOT comparable)", fontsize=9)
            ax.legend(fontsize=7)
        files = save(fig, out_dir / "xelm", "figure4")
    return FigureOut("xelm", "Figure 4", "Perplexity gain of the typology experts over the seed LM and the dense "
                     "model vs the language's training tokens", "ours" if got["mc4_xelm"] else "not run",
                     tuple(str(p.relative_to(out_dir.parent)) for p in files))
