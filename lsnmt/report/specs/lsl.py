"""LSL (Pires et al. 2023) tables and figures bound to our runs: the ``flores10_lsl`` experiment (Tables 1-5,
7, 8, 10-12; Figures 3, 4), ``flores10_lsl_zeroshot`` (Table 6) and the embedded default's own search.

CHRF and SPBLEU are averages over all 90 directions (``Avg``, metrics ``chrf`` and ``spbleu-flores101``);
|θ| and |θeff| come from ``reports/params.csv`` (``reports/paper/counts.yaml``: total and effective parameters).
Per-language (Table 2: the 9 directions into / out of each language), per-family (Table 11: the summary's
``group_pairs`` over ``evaluate.resource_groups`` EUR / CJK / SW) and zero-shot averages (Table 6: the
``zero-shot`` direction set of the summary, optionally restricted to group pairs or without ``*→SW``) are
computed from the evaluate stage's per-direction scores. Table 8's ``†`` (not significant, p >= 0.05) comes from
the evaluate stage's paired bootstrap of ``lsl_nas_dense`` against the baseline on chrF, printed after our value
in both panels as the paper does (shown, not compared: only the numbers decide the status); ``‡`` where it gave
no verdict because the outputs are degenerate (``lsnmt/eval/degenerate.py``). The significance counts of the
text and captions (LSL-NAS against the best adapters, the Table 3 and 4 variants, LSL-NAS-SD against the shared
decoder baseline) are the ``ours/significance`` table (``lsnmt/report/specs/significance.py``), from the
comparisons ``evaluate.comparisons`` configures. Table 7 counts the
training pairs the ``prepare`` filters kept, summed over corpora (the paper counts after de-duplication,
cleaning and CCMatrix down-sampling; our length-ratio cleaning and temperature sampling happen later, in the
``sample`` stage).
Table 12's COMET column reads the evaluate stage's ``comet`` metric (``lsnmt/eval/comet.py``, wmt20-comet-da),
which fills only where ``comet`` is listed in ``evaluate.metrics`` (it is not by default: unbabel-comet is not a
project dependency); compared within ``comet_tol`` = 0.01.

Not bound: Table 9 (chrF per direction on the Flores-101 *validation* set: the evaluate stage scores the test
set only), Table 13 (tokens/second on one V100 / one CPU thread: speed is measured by ``benchmarks/``, not by
the pipeline, so the report has nothing to read), Table 10's two "+ hidden dim 640" adapter rows, and the
shared-decoder adapter rows of Tables 5 and 12 (``flores10_lsl`` defines no such methods; their parameter counts
are in ``reports/params.csv`` and the ``ours/params`` table). Figure 3 plots the ``search`` stage's converged
mixing weights per encoder layer (mean ± std over seeds, ``results/{exp}/search/{name}/architecture.json``);
Figure 4 chrF against the number of LSLs (``lsl_n{n}``). The paper prints no numbers for either figure.
"""

from __future__ import annotations

from pathlib import Path

from lsnmt.figures import FigureOut, Panel, draw_panels, min_span
from lsnmt.report.cells import Avg, DataCount, DirMean, GroupPair, MatrixDir, Params, Row
from lsnmt.report.paper_table import Binding
from lsnmt.report.runs import Results, Run

PAPER = "LSL (Pires et al. 2023)"
EXP = "lsl-separate-decoder"  # the params.csv experiment label of the separate-decoder rows
SD = "lsl-shared-decoder"  # ... and of the shared-decoder rows (Table 5)
LANGS = ["DE", "EN", "ES", "FR", "IT", "JA", "KO", "PT", "SW", "ZH"]
CHRF = "chrf"


def _cols(table: str) -> dict:
    return {"CHRF": Avg(metric="chrf", subset="all"), "SPBLEU": Avg(metric="spbleu-flores101", subset="all"),
            "|θ|": Params(which="train", paper=PAPER, table=table, experiment=EXP),
            "|θeff|": Params(which="inference", paper=PAPER, table=table, experiment=EXP)}


def _scores() -> dict:
    return {"CHRF": Avg(metric=CHRF, subset="all"), "SPBLEU": Avg(metric="spbleu-flores101", subset="all")}


def _params(table: tuple[str, ...], experiment: str = EXP) -> dict:
    return {"|θ|": Params(which="train", paper=PAPER, table=table, experiment=experiment),
            "|θeff|": Params(which="inference", paper=PAPER, table=table, experiment=experiment)}


def _groups() -> list[tuple[str, str]]:
    return [(a, b) for a in ("EUR", "CJK", "SW") for b in ("EUR", "CJK", "SW") if (a, b) != ("SW", "SW")]


INTO, FROM = "Translating into the language (X→ )", "Translating from the language ( → X)"
SEP_BASE, LSL_DENSE = Row("naive", "naive-d512"), Row("lsl_nas_dense", "lsl-nas+dense-pretraining")


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
    ("lsl", "table2"): Binding(
        "lsl", "table2", "flores10_lsl",
        columns={lang: DirMean(metric=CHRF, subset="all", lang=lang.lower()) for lang in LANGS},
        rows={(side, label): Row(meth, arg="into" if side == INTO else "from")
              for side in (INTO, FROM)
              for label, meth in (("Separate Decoder Baseline", "naive"),
                                  ("Language Adapters ENC (SRC+TGT) 256", "adapters_enc_srctgt_256"),
                                    ("LSL-NAS", "lsl_nas_dense"))},
        note="chrF averaged over the 9 directions into (X→) / out of (→X) each language; the LSL-NAS rows are "
             "LSL-NAS with dense pre-training (caption)."),
    ("lsl", "table3"): Binding(
        "lsl", "table3", "flores10_lsl", columns=_scores(),
        rows={"LSL-NAS": "lsl_nas", "LSL (SRC={3, 4} & TGT={14, 15, 16})": "lsl_s34_t14_16",
              "LSL (SRC={2, 3} & TGT={13, 14, 15})": "lsl_s23_t13_15",
              "LSL (SRC={1, 2} & TGT={13, 14, 15})": "lsl_s12_t13_15",
              "LSL (SRC={1, 2} & TGT={14, 15, 16})": "lsl_s12_t14_16"}),
    ("lsl", "table5"): Binding(
        "lsl", "table5", "flores10_lsl", columns={**_scores(), **_params(("5", "1"), SD)},
        rows={"Separate Decoder Baseline": Row("naive", "naive-d512", params_exp=EXP),
              "LSL-NAS (separate decoder)": Row("lsl_nas", "lsl-nas", params_exp=EXP),
              "Shared Decoder Baseline": Row("sd_baseline", "naive-d512"),
              **{("+ hidden dim " + d, "Shared Decoder Baseline"): Row(f"sd_hidden{d}", f"naive-d{d}")
                 for d in ("640", "704", "768")},
              "LSL-NAS-SD": Row("lsl_nas_sd", "lsl-nas-sd"),
              ("+ Dense Pre-training", "LSL-NAS-SD"): Row("lsl_nas_sd_dense", "lsl-nas-sd+dense-pretraining"),
              "LSL (SRC={4} & TGT={13 − 16})": Row("lsl_sd_s4_t13_16", "lsl-s4-t13-16")}),
    ("lsl", "table6"): Binding(
        "lsl", "table6", "flores10_lsl_zeroshot",
        columns={"Baseline": "naive", "Adapters": "sd_adapters_512", "LSL-NAS-SD": "lsl_nas_sd"},
        rows={"Overall Average": Avg(metric=CHRF, subset="all"),
              "Overall Average (w/o *→SW)": DirMean(metric=CHRF, subset="all", not_tgt=("sw",)),
              "Zero-shot Average": Avg(metric=CHRF, subset="zero-shot"),
              "Zero-shot Average (w/o *→SW)": DirMean(metric=CHRF, subset="zero-shot", not_tgt=("sw",)),
              **{f"{a} → {b}": DirMean(metric=CHRF, subset="zero-shot", src=a, tgt=b)
                 for a, b in (("EUR", "CJK"), ("EUR", "SW"), ("CJK", "EUR"), ("CJK", "SW"), ("SW", "EUR"),
                              ("SW", "CJK"))}},
        note="Shared-decoder models trained on English-centric and within-group data (train_directions "
             "en-centric+groups); group rows average the zero-shot directions between the groups only."),
    ("lsl", "table7"): Binding(
        "lsl", "table7", "flores10_lsl", on_default=False,
        rows={lang: Row("data", arg=lang) for lang in LANGS[:-1]},
        columns={lang: DataCount(split="train", other=lang) for lang in LANGS[1:]},
        unbound=lambda keys, col: LANGS.index(col) <= LANGS.index(keys[0]),
        note="Ours: training pairs per language pair kept by the prepare filters, summed over corpora, before "
             "the sample stage's piece-ratio cleaning (sample.max_piece_ratio; sampled/sampling.json counts what "
             "it drops) and its temperature down-sampling."),
    ("lsl", "table8"): Binding(
        "lsl", "table8", "flores10_lsl",
        columns={lang: MatrixDir(metric=CHRF, tgt=lang.lower(), marked_by="lsl_nas_dense") for lang in LANGS},
        rows={("left" if side == 0 else "right", f"{lang} →"): Row(("naive", "lsl_nas_dense")[side],
                                                                   arg=lang.lower())
              for side in (0, 1) for lang in LANGS},
        unbound=lambda keys, col: keys[1] == f"{col} →",
        note="Left: the separate decoder baseline; right: LSL-NAS with dense pre-training. † after ours: "
             "lsl_nas_dense vs the baseline is not significant on that direction (paired bootstrap, chrF, "
             "evaluate.significance); ‡: no verdict, degenerate output (evaluate.degenerate_length_ratio, "
             "evaluate.degenerate_score)."),
    ("lsl", "table10"): Binding(
        "lsl", "table10", "flores10_lsl", columns={**_scores(), **_params(("10", "1"))},
        rows={"Separate Decoder Baseline": SEP_BASE, "LSL-NAS": Row("lsl_nas", "lsl-nas"),
              ("+ Dense Pre-training", "LSL-NAS"): LSL_DENSE,
              **{f"Language Adapters ENC {b}": Row(f"adapters_enc_{b}", f"adapters-enc-{b}") for b in (128, 256, 512)},
              **{f"Language Adapters ENC (SRC+TGT) {b}": Row(f"adapters_enc_srctgt_{b}", f"adapters-enc-src+tgt-{b}")
                 for b in (128, 256, 512)},
              **{f"Language-Pair Adapters ENC {b}": Row(f"pair_adapters_enc_{b}", f"pair-adapters-enc-{b}")
                 for b in (128, 256, 512)},
              **{f"Language Adapters ENC+DEC {b}": Row(f"adapters_enc_dec_{b}", f"adapters-enc+dec-{b}")
                 for b in (256, 512, 768, 1024)}}),
    ("lsl", "table11"): Binding(
        "lsl", "table11", "flores10_lsl",
        rows={f"{a} → {b}": GroupPair(metric=CHRF, pair=f"{a}->{b}") for a, b in _groups()},
        columns={"Sep. Decoder": Row("naive"), "Ours": Row("lsl_nas_dense"),
                 "∆": Row("lsl_nas_dense", minus="naive")},
        note="Ours: LSL-NAS with dense pre-training; groups from evaluate.resource_groups (EUR, CJK, SW)."),
    ("lsl", "table12"): Binding(
        "lsl", "table12", "flores10_lsl",
        columns={"COMET": Avg(metric="comet", subset="all", kind="comet"), **_scores()},
        rows={"Separate Decoder Baseline": SEP_BASE, "LSL-NAS": "lsl_nas", ("+ Dense Pre-training", "LSL-NAS"):
              LSL_DENSE, "Language Adapters ENC (SRC+TGT) 256": "adapters_enc_srctgt_256",
              "Shared Decoder Baseline": "sd_baseline", "LSL-NAS-SD": "lsl_nas_sd",
              ("+ Dense Pre-training", "LSL-NAS-SD"): "lsl_nas_sd_dense"}),
}


def _search(run: Run | None, name: str) -> dict | None:
    return None if run is None else run.json(f"search/{name}/architecture.json")


def _plot_weights(ax, arch: dict, title: str) -> None:
    layers = list(range(1, len(arch["mean"]) + 1))
    for i, label in enumerate(("shared", "source", "target")):
        mean = [m[i] for m in arch["mean"]]
        std = [s[i] for s in arch["std"]]
        ax.plot(layers, mean, marker="o", label=label)
        ax.fill_between(layers, [m - s for m, s in zip(mean, std, strict=True)],
                        [m + s for m, s in zip(mean, std, strict=True)], alpha=0.2)
    ax.set_xticks(layers)
    min_span(ax, 1.0, lo=0.0, hi=1.0)  # softmax weights: near-equal ones (0.32-0.35) are not zoomed into
    ax.set_xlabel("encoder layer")
    ax.set_ylabel("mixing weight")
    ax.set_title(f"{title}: {arch.get('notation', '')}", fontsize=8)
    ax.legend(fontsize=7)


def fig3(results: Results, out_dir: Path, paper_dir: Path | None = None) -> FigureOut:
    del paper_dir
    ours, dflt = _search(results.run("flores10_lsl"), "nas"), _search(results.run("default"), "lsl_search")
    panels = [
        Panel("search `nas` of experiment flores10_lsl (the paper prints no numbers)",
              (lambda ax: _plot_weights(ax, ours, "ours: flores10_lsl search `nas`")) if ours else None),
        Panel("the default run's search `lsl_search`",
              (lambda ax: _plot_weights(ax, dflt, "embedded default (NOT comparable)")) if dflt else None),
    ]
    files = draw_panels(panels, out_dir / "lsl", "figure3", ncols=2, panel_w=5.0, panel_h=3.4)
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
    def draw(ax) -> None:
        ax.plot([n for n, _ in pts], [v for _, v in pts], marker="o")
        ax.set_xlabel("number of LSLs")
        ax.set_ylabel("chrF")

    files = draw_panels([Panel("experiment flores10_lsl (naive, lsl_n2 ... lsl_n16)", draw if pts else None)],
                        out_dir / "lsl", "figure4", ncols=1, panel_w=5.0, panel_h=3.4)
    return FigureOut("lsl", "Figure 4", "chrF vs the number of LSLs (half source-indexed at the bottom, half "
                     "target-indexed at the top)", "ours" if pts else "not run",
                     tuple(str(p.relative_to(out_dir.parent)) for p in files))
