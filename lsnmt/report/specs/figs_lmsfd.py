"""LMS-FD figures: Figure 1 (BLEU gain vs extra parameters, LMS vs Switch) and Figure 4 (extra LS parameters
for training and inference, from the paper's formulas and from our own modules).

Figure 1's paper points are its Table 9 ("The numeric results for the Figure 1"); the gain of a model is the
mean of its en→xx and xx→en "all" averages minus the naive model's. Ours come from the ``opus15`` experiment
(paper scale) and, in a separate panel, from the embedded default run (not comparable).
"""

from __future__ import annotations

from pathlib import Path

from lsnmt.figures import FigureOut, Panel, draw_panels, figure, save
from lsnmt.report import paper as paper_tables
from lsnmt.report.cells import Avg, Params, Row
from lsnmt.report.runs import DEFAULTS, Results, Run

PAPER = "LMS-FD (Xu et al. 2023)"
Points = dict[str, list[tuple[float, float]]]


def _paper_fig1(paper_dir: Path) -> Points:
    df = paper_tables.load("lmsfd", 9, paper_dir)
    base = None
    pts: Points = {"LMS": [], "Switch Transformer": []}
    for _, r in df.iterrows():
        gain = (paper_tables.number(r["en→xx / all"]) + paper_tables.number(r["xx→en / all"])) / 2
        if r["Methods"].startswith("Naive"):
            base = gain
            continue
        family = "LMS" if r["Methods"].startswith("LMS") else "Switch Transformer"
        pts[family].append((paper_tables.number(r["extra #params / Training"]) / 1e6, gain))
    assert base is not None
    return {k: [(x, y - base) for x, y in v] for k, v in pts.items()}


def _our_fig1(results: Results, run: Run | None, methods: dict[str, list[Row]], table: str = "9") -> Points:
    if run is None or run.summary is None:
        return {}

    def gain(row: Row) -> float | None:
        a, b = Avg(subset="en-xx").value(results, run, row), Avg(subset="xx-en").value(results, run, row)
        return None if a is None or b is None else (a + b) / 2

    base = gain(Row("naive"))
    naive_params = Params(which="train", paper=PAPER, table=table).value(results, run, Row("naive"))
    pts: Points = {}
    for family, rows in methods.items():
        for row in rows:
            g = gain(row)
            p = Params(which="train", paper=PAPER, table=table).value(results, run, row)
            if g is None or base is None or p is None:
                continue
            extra = p if run.name not in DEFAULTS else p - (naive_params or 0.0)
            pts.setdefault(family, []).append((extra / 1e6, g - base))
    return pts


def _plot(ax, pts: Points, title: str) -> None:
    for family, marker in (("LMS", "o"), ("Switch Transformer", "s")):
        xy = sorted(pts.get(family, []))
        if xy:
            ax.plot([x for x, _ in xy], [y for _, y in xy], marker=marker, label=family)
    ax.set_title(title, fontsize=9)
    ax.set_xlabel("extra parameters (M)")
    ax.set_ylabel("BLEU gain over naive")
    ax.legend(fontsize=8)


def fig1(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    paper_dir = paper_dir or paper_tables.ROOT
    paper_pts = _paper_fig1(paper_dir)
    sweep = {"LMS": [Row("lms" if d == 20 else f"lms_d{d}", f"lms-d{d}") for d in (4, 12, 20, 28, 36, 44, 52, 60)],
             "Switch Transformer": [Row("switch" if e == 16 else f"switch_e{e}", f"switch-e{e}")
                                    for e in (4, 8, 12, 16)]}
    ours = _our_fig1(results, results.run("opus15"), sweep)
    default = _our_fig1(results, results.run("default"), {"LMS": [Row("lms")], "Switch Transformer": [Row("switch")]})
    panels = [
        Panel("paper: Table 9 missing", lambda ax: _plot(ax, paper_pts, "paper (Table 9, OPUS-15)")),
        Panel("experiment opus15", (lambda ax: _plot(ax, ours, "ours: opus15")) if ours else None),
        Panel("default run has no lms/switch",
              (lambda ax: _plot(ax, default, "embedded default (NOT comparable)")) if default else None),
    ]
    files = draw_panels(panels, out_dir / "lmsfd", "figure1", ncols=3, panel_w=3.5, panel_h=3.4)
    status = "not run"
    if ours:
        diffs = [abs(y - py) for fam in ours for (x, y), (_, py) in zip(sorted(ours[fam]), sorted(paper_pts[fam]),
                                                                         strict=False)]
        status = "reproduced" if diffs and max(diffs) <= 1.0 else "differs"
    return FigureOut("lmsfd", "Figure 1", "BLEU gain over the naive model vs extra parameters, LMS vs Switch "
                     "Transformer (paper: Table 9's numbers; ours: opus15; default run separately)", status,
                     tuple(str(p.relative_to(out_dir.parent)) for p in files))


# Figure 4: L languages, r x c projection, E experts, rank d (the caption's sample numbers)
L, R, C, E, D = 15, 4096, 1024, 8, 32


def formula() -> dict[str, tuple[float, float]]:
    """Extra LS parameters (training, inference) of each method, from the paper's complexity column."""
    return {"LS module": (L * R * C, L * R * C), "MoE": (E * R * C, E * R * C), "LMS": (L * D * (R + C),) * 2,
            "LS + FD": ((L + 1) * R * C, R * C), "LMS + FD": ((L + 1) * D * (R + C), D * (R + C))}


def counted() -> dict[str, tuple[float, float]]:
    """The same counts from our own modules (``models/ls/lms.py``), built on the meta device."""
    from models.ls.lms import LMSLinear
    from models.meta import meta_device

    def extra(shared: bool) -> tuple[int, int]:
        """(training, inference) extra parameters; a deployed model keeps every language's factors on the LS
        route (any direction may come) and only the shared pair on the Share route."""
        with meta_device():
            m = LMSLinear(C, R, bias=False, num_languages=L, rank=D, side="encoder", synthesis="language",
                          shared=shared, route="share" if shared else "ls")
        ls = m.lms_v.numel() + m.lms_f.numel()
        share = m.shared_v.numel() + m.shared_f.numel() if shared else 0
        return ls + share, share if shared else ls

    return {"LMS": extra(False), "LMS + FD": extra(True)}


def fig4(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    del results, paper_dir
    paper, ours = formula(), counted()
    names = list(paper)
    with figure(width=7.5, height=3.4) as (fig, axes):
        ax = axes[0][0]
        for i, (phase, shift) in enumerate((("training", -0.2), ("inference", 0.2))):
            ax.bar([j + shift for j in range(len(names))], [paper[n][i] / 1e6 for n in names], width=0.4,
                   label=f"paper formula, {phase}", alpha=0.7)
            ax.scatter([j + shift for j, n in enumerate(names) if n in ours],
                       [ours[n][i] / 1e6 for n in names if n in ours], marker="x", color="k", zorder=3,
                       label="ours (counted)" if i == 0 else None)
        ax.set_yscale("log")
        ax.set_xticks(range(len(names)), names)
        ax.set_ylabel("extra LS parameters (M)")
        ax.set_title(f"L={L}, r={R}, c={C}, E={E}, d={D}", fontsize=9)
        ax.legend(fontsize=7)
        files = save(fig, out_dir / "lmsfd", "figure4")
    status = "reproduced" if all(ours[n] == paper[n] for n in ours) else "differs"
    return FigureOut("lmsfd", "Figure 4 (v1)", "Extra language-specific parameters for training and inference: the "
                     "paper's complexity formulas, and LMS / LMS+FD counted from our modules", status,
                     tuple(str(p.relative_to(out_dir.parent)) for p in files))

