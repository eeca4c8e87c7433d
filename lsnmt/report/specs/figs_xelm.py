"""x-elm (Blevins et al. 2024) figures from the x-elm stages' outputs: Figure 2 (the typology hierarchy,
``cluster/typology/hierarchy.json``), Figure 3 (average perplexity vs number of experts, ``eval/figure3.tsv``) and
Figure 4 (the typology experts' perplexity gain vs each language's training tokens, ``eval/figure4.tsv``); ours
from ``mc4_xelm``, the embedded default beside it (NOT comparable). The paper prints no numbers for them.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from matplotlib.ticker import MaxNLocator, NullFormatter

from lsnmt.figures import FigureOut, Panel, draw_panels, label_points
from lsnmt.report.runs import Results, Run
from lsnmt.report.specs.xelm import _tsv


def _hierarchy(run: Run | None) -> dict | None:
    return None if run is None else run.json("xelm/cluster/typology/hierarchy.json")


def fig2(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    del paper_dir
    ours, dflt = _hierarchy(results.run("mc4_xelm")), _hierarchy(results.run("default"))
    def draw(ax, h: dict, title: str) -> None:
        rounds = h["rounds"]
        for y, r in enumerate(rounds):
            ax.text(0.0, y, f"k={r['k']}: " + "  |  ".join(" ".join(c) for c in r["clusters"]), fontsize=7,
                    va="center")
        ax.set_ylim(-0.5, len(rounds) - 0.5)
        ax.set_xlim(0, 1)
        ax.axis("off")
        ax.set_title(f"{title} ({h.get('feature_set', '')}, {h.get('linkage', '')} linkage)", fontsize=8)

    panels = [Panel(f"{title}: typology clustering", partial(draw, h=h, title=title) if h else None)
              for h, title in ((ours, "ours: mc4_xelm"), (dflt, "embedded default"))]
    files = draw_panels(panels, out_dir / "xelm", "figure2", ncols=2, panel_w=5.0, panel_h=3.8)
    return FigureOut("xelm", "Figure 2", "Typology hierarchy: languages merged greedily by URIEL distance between "
                     "clusters (xelm.typology.linkage, in each panel's title), one line per round",
                     "ours" if ours else "not run",
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
    def draw(ax, pts: dict[str, list[tuple[int, float]]], title: str) -> None:
        for method, xy in pts.items():
            ax.plot([k for k, _ in xy], [p for _, p in xy], marker="o", label=method)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # k counts experts: no tick at 1.5
        ax.set_xlabel("number of experts k")
        ax.set_ylabel("average perplexity")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)

    panels = [Panel(title, partial(draw, pts=pts, title=title) if pts else None)
              for pts, title in ((ours, "ours: mc4_xelm"), (dflt, "embedded default (NOT comparable)"))]
    files = draw_panels(panels, out_dir / "xelm", "figure3", ncols=2, panel_w=5.0, panel_h=3.4)
    return FigureOut("xelm", "Figure 3", "Average perplexity vs number of experts k (the paper prints no numbers)",
                     "ours" if ours else "not run", tuple(str(p.relative_to(out_dir.parent)) for p in files))


def _fig4_panel(ax, rows: list[dict[str, str]], title: str) -> None:
    """Gain over the seed LM and over dense per language against its training tokens; each language's label
    beside its gain over dense, placed apart from the others (:func:`lsnmt.figures.label_points`)."""
    x = [float(r["train_tokens"]) for r in rows]
    ax.scatter(x, [float(r["gain_vs_seed"]) for r in rows], marker="o", label="vs seed LM")
    ax.scatter(x, [float(r["gain_vs_dense"]) for r in rows], marker="^", label="vs dense")
    label_points(ax, [(xi, float(r["gain_vs_dense"]), r["lang"]) for r, xi in zip(rows, x, strict=True)])
    if max(x) > 10 * min(x):  # a log axis over a decade or more, its major ticks labelled only
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
    else:  # within a decade, a log axis labels its minor ticks (1.001×10^4 ...) on top of each other
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.ticklabel_format(axis="x", style="plain", useOffset=False)
    ax.set_xlabel("training tokens")
    ax.set_ylabel("perplexity gain (typology experts)")
    ax.set_title(title, fontsize=9)
    ax.legend(fontsize=7)


def fig4(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    """One panel per experiment with a ``figure4.tsv`` (mc4_xelm; the embedded default, NOT comparable); one
    without is a line of text below them."""
    del paper_dir
    got = {name: _tsv(results.run(name), "figure4.tsv") for name in ("mc4_xelm", "default")}
    panels = []
    for name, rows in got.items():
        title = name if name != "default" else f"embedded {name} (NOT comparable)"
        draw = (lambda ax, r=rows, t=title: _fig4_panel(ax, r, t)) if rows else None
        panels.append(Panel(f"experiment {name}", draw))
    files = draw_panels(panels, out_dir / "xelm", "figure4", ncols=2, panel_w=5.0, panel_h=3.4)
    return FigureOut("xelm", "Figure 4", "Perplexity gain of the typology experts over the seed LM and the dense "
                     "model vs the language's training tokens", "ours" if got["mc4_xelm"] else "not run",
                     tuple(str(p.relative_to(out_dir.parent)) for p in files))
