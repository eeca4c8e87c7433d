"""CLM figures: Figure 2 (gain vs model size), Figures 3/5/6 (t-SNE of encoder representations), Figure 4
(sparsity top-w).

Figure 2's numbers are not printed in the paper (only the plot), so its paper panel says so; ours is the
``opus100_clm_enxx`` / ``opus100_clm_xxen`` sweeps of footnote 6 (adapter bottleneck 32 … 128, CLM features
74 … 194) plus CLSR, and the embedded default run's single points in a separate panel. The t-SNE figures are drawn
by the ``evaluate`` stage for every method (``evaluate.tsne_sets``); the report copies them. Figure 4 (Sec. 5.4)
is a decoding sweep of the trained sCLM: ``method_cfg.sclm.sweep_top_w`` decodes it again keeping each token's
``w`` largest feature proportions (systems ``sclm_w<w>``, ``lsnmt.methods.systems``); ours plots
``BLEU(sclm_w<w>) - BLEU(sclm)`` against ``w``, the paper's axis. The paper prints no numbers for Figure 4, only
the plot; its panel gives what the text says (en-xx degrades only below w = 14, xx-en below w = 54), and ours
marks those two thresholds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from lsnmt.figures import FigureOut, Panel, draw_panels
from lsnmt.report.cells import Avg, Params, Row
from lsnmt.report.runs import Results, Run

PAPER = "CLM (Liu et al. 2022)"
SWEEP = {
    "Adapter": [f"adapter_b{b}" for b in (32, 48, 64, 80, 96, 112)] + ["adapter"],
    "CLSR": ["clsr"],
    "sCLM": ["sclm_k74", "sclm_k94", "sclm_k114", "sclm_k134", "sclm_k154", "sclm_k174", "sclm_k194"],
    "mCLM": ["mclm_k74", "mclm_k94", "mclm_k114", "mclm", "mclm_k154", "mclm_k174", "mclm_k194"],
}
CLM_RUNS = {"en-xx": "opus100_clm_enxx", "xx-en": "opus100_clm_xxen"}
DEFAULT_POINTS = {"Adapter": ["adapter"], "CLSR": ["clsr"], "sCLM": ["sclm"], "mCLM": ["mclm"]}


def _points(results: Results, run: Run | None, families: dict[str, list[str]], side: str) -> dict[str, list[tuple]]:
    if run is None or run.summary is None:
        return {}
    base = Avg(subset=side).value(results, run, Row("naive"))
    out: dict[str, list[tuple]] = {}
    for family, methods in families.items():
        for m in methods:
            score = Avg(subset=side).value(results, run, Row(m))
            size = Params(which="train").value(results, run, Row(m))  # the run's own count
            if score is not None and size is not None and base is not None:
                out.setdefault(family, []).append((size / 1e6, score - base))
    return out


def _plot(ax, pts: dict[str, list[tuple]], title: str) -> None:
    for family, marker in (("Adapter", "s"), ("CLSR", "^"), ("sCLM", "o"), ("mCLM", "D")):
        xy = sorted(pts.get(family, []))
        if xy:
            ax.plot([x for x, _ in xy], [y for _, y in xy], marker=marker, label=family)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("model size (M)")
    ax.set_ylabel("BLEU gain over multilingual")
    ax.legend(fontsize=7)


def fig2(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    """Per side, ours from the OPUS-100 CLM sweep and the embedded default's points; a side without scores, and
    the paper's (it prints no numbers), are one line of text below the panels."""
    del paper_dir
    default = results.run("default")
    panels: list[Panel] = []
    any_ours = False
    for side in ("en-xx", "xx-en"):
        panels.append(Panel(f"paper {side}: the paper prints no numbers for Figure 2, only the plot"))
        name = CLM_RUNS[side]  # CLM's en-xx and xx-en models are separate experiments
        ours = _points(results, results.run(name), SWEEP, side)
        any_ours |= bool(ours)
        panels.append(Panel(f"experiment {name} ({side})",
                            (lambda ax, o=ours, t=f"ours: {name}, {side}": _plot(ax, o, t)) if ours else None))
        dflt = _points(results, default, DEFAULT_POINTS, side)
        panels.append(Panel(f"default run: no adapter/clsr/sclm/mclm scores ({side})",
                            (lambda ax, d=dflt, t=f"embedded default, {side} (NOT comparable)": _plot(ax, d, t))
                            if dflt else None))
    files = draw_panels(panels, out_dir / "clm", "figure2", ncols=2)
    return FigureOut("clm", "Figure 2", "Gain over the multilingual model vs model size: Adapter, CLSR, sCLM, mCLM "
                     "(ours: opus100_clm_enxx / _xxen sweeps; default run separately; the paper prints no numbers)",
                     "not run" if not any_ours else "ours", tuple(str(p.relative_to(out_dir.parent)) for p in files))


def tsne(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    """Copy the evaluate stage's t-SNE figures (PNG and PDF) of every run present."""
    del paper_dir
    files: list[Path] = []
    dest = out_dir / "clm" / "tsne"
    if dest.exists():
        shutil.rmtree(dest)
    paper_scale = False
    for name, run in sorted(results.runs.items()):
        for rel in (run.summary or {}).get("figures", []):
            png = run.root / "evaluate" / rel
            for src in (png, png.with_suffix(".pdf")):
                if src.is_file():
                    target = dest / f"{name}-{src.name}"
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(src, target)
                    files.append(target)
                    paper_scale |= name in CLM_RUNS.values()
    status = "ours" if paper_scale else "not run"
    caption = ("t-SNE of encoder representations of the multi-way sets, one panel per resource group (CLM "
               "Figures 3, 5, 6; drawn by the evaluate stage for every method and run"
               + ("" if files else "; none present") + ")")
    return FigureOut("clm", "Figures 3, 5, 6", caption, status,
                     tuple(str(p.relative_to(out_dir.parent)) for p in sorted(files)))


SWEEP_METHOD = "sclm"
"""The method whose top-w sweep Figure 4 plots (Sec. 5.4: "the performance of sCLM with different w")."""
PAPER_THRESHOLD = {"en-xx": 14, "xx-en": 54}
"""Sec. 5.4: en-xx "remarkably degrades only when w < 14"; xx-en "the degradation comes earlier (w < 54)"."""


def sweep_points(results: Results, run: Run | None, side: str, method: str = SWEEP_METHOD) -> list[tuple[int, float]]:
    """``[(w, BLEU(method_w<w>) - BLEU(method))]`` of ``run``'s top-w systems (``summary.json``'s ``systems``),
    averaged over the ``side`` directions, sorted by ``w``; the full model itself at ``w = k`` is left out."""
    if run is None or run.summary is None:
        return []
    full = Avg(subset=side).value(results, run, Row(method))
    out = []
    for name, sys in run.summary.get("systems", {}).items():
        if sys.get("method") == method and sys.get("top_w") is not None:
            score = Avg(subset=side).value(results, run, Row(name))
            if score is not None and full is not None:
                out.append((int(sys["top_w"]), score - full))
    return sorted(out)


def _sweep_panel(ax, pts: list[tuple[int, float]], side: str, title: str, threshold: bool) -> None:
    """∆BLEU against ``w``; ``threshold``: mark the paper's w (a paper-scale run, whose k is the paper's)."""
    ax.plot([w for w, _ in pts], [d for _, d in pts], marker="o", label=f"{SWEEP_METHOD} top-w")
    ax.axhline(0.0, color="0.6", linewidth=0.8)
    if threshold:
        ax.axvline(PAPER_THRESHOLD[side], color="0.4", linestyle="--", linewidth=0.8,
                   label=f"paper: drop below w = {PAPER_THRESHOLD[side]}")
    ax.set_xscale("log", base=2)
    ax.set_xticks([w for w, _ in pts], [str(w) for w, _ in pts], fontsize=7)
    ax.minorticks_off()
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("w (features kept per token)")
    ax.set_ylabel("∆BLEU vs all features")
    ax.legend(fontsize=7)


def fig4(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    """Per side: ours from the OPUS-100 CLM experiment, and the embedded default run's sweep when it has one
    (``method_cfg.sclm.sweep_top_w``; NOT comparable, as in Figure 2). The paper's panel (no numbers, its text's
    threshold) and a side without scores are one line of text below the panels."""
    del paper_dir
    any_ours = False
    default = results.run("default")
    panels: list[Panel] = []
    for side in ("en-xx", "xx-en"):
        panels.append(Panel(f"paper {side}: the paper prints no numbers for Figure 4, only the plot; its text: "
                            f"\"degrades only when w < {PAPER_THRESHOLD[side]}\""))
        name = CLM_RUNS[side]
        pts = sweep_points(results, results.run(name), side)
        any_ours |= bool(pts)
        panels.append(Panel(f"experiment {name}: no {SWEEP_METHOD}_w<w> scores ({side})",
                            (lambda ax, p=pts, s=side, t=f"ours: {name}, {side}": _sweep_panel(ax, p, s, t, True))
                            if pts else None))
        dflt = sweep_points(results, default, side)
        panels.append(Panel(f"default run: no {SWEEP_METHOD}_w<w> scores ({side})",
                            (lambda ax, p=dflt, s=side, t=f"embedded default, {side} (NOT comparable)":
                             _sweep_panel(ax, p, s, t, False)) if dflt else None))
    files = draw_panels(panels, out_dir / "clm", "figure4", ncols=2)
    return FigureOut("clm", "Figure 4", "∆BLEU of sCLM keeping only the w largest feature proportions per token "
                     "(top-w sparsity, Sec. 5.4), en-xx and xx-en on OPUS-100 (ours: one trained sclm per "
                     "experiment decoded with each w of sweep_top_w; default run separately; the paper prints no "
                     "numbers)", "ours" if any_ours else "not run",
                     tuple(str(p.relative_to(out_dir.parent)) for p in files))
