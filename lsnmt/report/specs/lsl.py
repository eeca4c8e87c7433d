"""LSL (Pires et al. 2023) tables and figures bound to our runs: the ``flores10_lsl`` experiment (Tables 1, 4;
Figures 3, 4) and the embedded default's own search.

CHRF and SPBLEU are averages over all 90 directions (``Avg``, metrics ``chrf`` and ``spbleu-flores101``);
|θ| and |θeff| come from ``reports/params.csv`` (``lsnmt/rows_lsl.py``: total and effective parameters).
Figure 3 plots the ``search`` stage's converged mixing weights per encoder layer (mean ± std over seeds,
``results/{exp}/search/{name}/architecture.json``); Figure 4 chrF against the number of LSLs (``lsl_n{n}``).
The paper prints no numbers for either figure. Tables 2, 3, 5-13 are not bound yet (they read "not run").
"""

from __future__ import annotations

from pathlib import Path

from lsnmt.report.cells import Avg, Params, Row
from lsnmt.report.figures import FigureOut, figure, not_run_panel, save
from lsnmt.report.runs import Results, Run
from lsnmt.report.table import Binding

PAPER = "LSL (Pires et al. 2023)"
EXP = "lsl-separate-decoder"  # the params.csv experiment label of the separate-decoder rows


def _cols(table: str) -> dict:
    return {"CHRF": Avg(metric="chrf", subset="all"), "SPBLEU": Avg(metric="spbleu-flores101", subset="all"),
            "|θ|": Params(which="train", paper=PAPER, table=table, experiment=EXP),
            "|θeff|": Params(which="inference", paper=PAPER, table=table, experiment=EXP)}


BINDINGS = {
    ("lsl", "table1"): Binding(
        "lsl", "table1", "flores10_lsl", columns=_cols("1"),
        rows={"Separate Decoder Baseline": Row("naive", "naive-d512"),
              "+ hidden dim 640": Row("hidden640", "naive-d640"), "+ hidden dim 704": Row("hidden704", "naive-d704"),
              "+ hidden dim 768": Row("hidden768", "naive-d768"),
              **{f"Language Adapters ENC {b}": Row(f"adapters_enc_{b}", f"adapters-enc-{b}") for b in (128, 256, 512)},
              **{f"Language Adapters ENC (SRC+TGT) {b}": Row(f"adapters_enc_srctgt_{b}", f"adapters-enc-src+tgt-{b}")
                 for b in (128, 256, 512)},
              "LSL-NAS": Row("lsl_nas", "lsl-nas"),
              ("+ Dense Pre-training", "LSL-NAS"): Row("lsl_nas_dense", "lsl-nas+dense-pretraining"),
              "LSL (SRC={1, 2} & TGT={15, 16})": Row("lsl_s12_t15_16", "lsl-s12-t15,16"),
              "LSL (SRC={1, 2, 3} & TGT={14, 15, 16})": Row("lsl_s1_3_t14_16", "lsl-s123-t14,15,16"),
              "LSL (SRC=∅ & TGT={13, 14, 15})": Row("lsl_t13_15", "lsl-s0-t13,14,15"),
              "LSL (SRC={3, 4} & TGT=∅)": Row("lsl_s34", "lsl-s34-t0"),
              "LSL (SRC={13, 14, 15} & TGT={3, 4})": Row("lsl_swapped", "lsl-s13,14,15-t34")}),
    ("lsl", "table4"): Binding(
        "lsl", "table4", "flores10_lsl", columns={**_cols("4"), "|θ|": Params(which="train", paper=PAPER,
                                                                               table=("4", "1"), experiment=EXP),
                                                   "|θeff|": Params(which="inference", paper=PAPER,
                                                                    table=("4", "1"), experiment=EXP)},
        rows={"LSL-NAS": Row("lsl_nas", "lsl-nas"), "LS-FFN": Row("ls_ffn", "ls-ffn"),
              "LS-ATTENTION": Row("ls_attention", "ls-attention")}),
}


def _search(run: Run | None, name: str) -> dict | None:
    return None if run is None else run.json(f"search/{name}/architecture.json")


def _plot_weights(ax, arch: dict, title: str) -> None:  # noqa: ANN001
    layers = list(range(1, len(arch["mean"]) + 1))
    for i, label in enumerate(("shared", "source", "target")):
        mean = [m[i] for m in arch["mean"]]
        std = [s[i] for s in arch["std"]]
        ax.plot(layers, mean, marker="o", label=label)
        ax.fill_between(layers, [m - s for m, s in zip(mean, std, strict=True)],
                        [m + s for m, s in zip(mean, std, strict=True)], alpha=0.2)
    ax.set_xticks(layers)
    ax.set_xlabel("encoder layer")
    ax.set_ylabel("mixing weight")
    ax.set_title(f"{title}: {arch.get('notation', '')}", fontsize=8)
    ax.legend(fontsize=7)


def fig3(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    del paper_dir
    ours, dflt = _search(results.run("flores10_lsl"), "nas"), _search(results.run("default"), "lsl_search")
    with figure(width=10.0, height=3.4, ncols=2) as (fig, axes):
        if ours:
            _plot_weights(axes[0][0], ours, "ours: flores10_lsl search `nas`")
        else:
            not_run_panel(axes[0][0], "search `nas` of experiment flores10_lsl (the paper prints no numbers)")
        if dflt:
            _plot_weights(axes[0][1], dflt, "embedded default (NOT comparable)")
        else:
            not_run_panel(axes[0][1], "the default run's search `lsl_search`")
        files = save(fig, out_dir / "lsl", "figure3")
    return FigureOut("lsl", "Figure 3", "Converged mixing weights (shared / source / target) per encoder layer of "
                     "the architecture search, mean ± std over seeds", "ours" if ours else "not run",
                     tuple(str(p.relative_to(out_dir.parent)) for p in files))


def fig4(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    del paper_dir
    run = results.run("flores10_lsl")
    pts = []
    if run is not None and run.summary is not None:
        for n in range(0, 17, 2):
            v = Avg(metric="chrf", subset="all").value(results, run, Row("naive" if n == 0 else f"lsl_n{n}"))
            if v is not None:
                pts.append((n, v))
    with figure(width=5.0, height=3.4) as (fig, axes):
        if pts:
            axes[0][0].plot([n for n, _ in pts], [v for _, v in pts], marker="o")
            axes[0][0].set_xlabel("number of LSLs")
            axes[0][0].set_ylabel("chrF")
        else:
            not_run_panel(axes[0][0], "experiment flores10_lsl (naive, lsl_n2 ... lsl_n16)")
        files = save(fig, out_dir / "lsl", "figure4")
    return FigureOut("lsl", "Figure 4", "chrF vs the number of LSLs (half source-indexed at the bottom, half "
                     "target-indexed at the top)", "ours" if pts else "not run",
                     tuple(str(p.relative_to(out_dir.parent)) for p in files))
