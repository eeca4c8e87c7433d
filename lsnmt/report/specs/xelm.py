"""x-elm (Blevins et al. 2024) tables and figures bound to the x-elm stages' outputs: ``lm_eval``
(``results/{exp}/xelm/eval``: ``table1.tsv``, ``table2.tsv``, ``table8.tsv``, ``ppl.tsv``) and ``lm_icl``
(``results/{exp}/xelm/icl``: ``summary.json``'s ``table3``, ``results.tsv``).

* Table 1: per-language perplexity of the dense model, TF-IDF top-1 / ensemble and typology experts at main k;
  Table 7: the same at k=4 and k=16 (``ppl.tsv`` models ``tfidf-k{k}-top1``, ``tfidf-k{k}-ens``,
  ``typology-k{k}``; "Avg." the mean over the x-elm languages, as ``lm_eval`` averages);
  Table 2: unseen target languages and their donors (``table2.tsv``: dense, TF-IDF ensemble, dense LAPT, HMR);
  Table 8: TF-IDF top-1 vs ensembles of the m most likely experts (``table8.tsv``).
* Table 3: ICL accuracy averaged over the task's x-elm languages and win rate (``summary.json`` ``table3``,
  ``{task}@{shots}``; our win rate counts the seed LM among the competitors where the paper counts XGLM);
  Tables 9-11: per-language accuracy (``results.tsv``). Zero-shot rows read ``shots = 0``, few-shot rows
  ``xelm.icl.shots`` (x-elm: 8 English demonstrations, averaged over ``xelm.icl.runs`` draws).
* Table 4 (compute budget): ``# Tokens`` and ``# updates`` of the 10.5B-token rows (mc4_xelm's one budget; k = 1
  is the dense model ``dense-k1-e0``, k = 4, 8, 16 the TF-IDF expert sets) are read from what the expert jobs
  actually trained, ``results/{exp}/xelm/experts/{id}/data.json`` (``updates``, ``tokens_seen``): a set's tokens
  are the sum over its k experts (each trains ``batch_tokens / k`` per update, as the paper's Table 4 splits one
  budget), not the config. The typology sets have the same budget by construction. ``# GPUs`` and ``grad acc.``
  are hardware choices params.yaml does not fix (``max_tokens`` sets our accumulation per device, not the
  paper's GPU x accumulation product): unbound, as are the 21.0B rows (mc4_xelm trains one budget).
* Table 5 (data statistics): ``mC4 Size (%)`` is the size of our training text per language,
  ``data/{exp}/lm/meta.json`` ``bytes.train`` (written by ``lm_data``: the UTF-8 bytes of ``train/{lang}.txt``,
  after dedup and ``max_train_docs``), in GiB = 2^30 bytes as the caption states ("gigabytes (GiB)"); the
  bracketed share is 100 x size / the sum over the pretraining languages (the paper's 16 percentages are shares
  of the 16 sizes' sum; the unseen HMR targets print none, as the paper's "(–)"), 1 decimal, 2 below 0.1% (as
  "0.05%"). Only the size is compared (2% relative). The XGLM Size column (CC100-XL) is not ours: unbound.
* Figure 2 (typology hierarchy, ``cluster/typology/hierarchy.json``), Figure 3 (perplexity vs number of
  experts) and Figure 4 (gain vs training tokens): :mod:`lsnmt.report.specs.figs_xelm`.

Paper scale is ``mc4_xelm``: its single budget of 10.5B tokens (20,000 updates of 524,288 tokens) fills the
10.5B-token columns of Table 1; Tables 3, 8 and 9-11 print the paper's 21B-token models, so ours there are at
half the paper's budget (said in each table's note). The XGLM columns of Tables 1, 2 and 7 are our seed's
perplexities when that seed is XGLM-1.7B itself (``lm_data.init: xglm``, as mc4_xelm), else "not run"; the 21.0B
columns of Table 1 stay "not run". Perplexities are compared as printed only where tokenizer and seed are
XGLM's; a run with another seed (``init: scratch``) compares % reductions over a baseline column instead
(:class:`Relative`, said in the tables' notes).
Perplexity matches within 5% count as reproduced. The embedded ``default`` run writes the same files at tiny
scale (k = 2, 4 with main k 4, HMR for HE only): its cells fill where it has the model (e.g. Table 7's k=4
columns, Table 8's top-1 and m=2, Table 2's HE row), never the k=16 or m=8 ones.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from typing import Any

from lsnmt.report import paper as paper_tables
from lsnmt.report.cells import Kind, Row, Selector
from lsnmt.report.paper_table import Binding, paper_value
from lsnmt.report.runs import Results, Run
from lsnmt.xelm.config import DENSE

GIB = 2**30
"""x-elm Table 5's unit: the caption says "Sizes are in gigabytes (GiB)"."""


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


def _cell(text: str | None) -> float | None:
    """A TSV cell as written by ``lsnmt.xelm.perplexities.write_tsv`` (``""`` for NaN: no value)."""
    return float(text) if text not in (None, "") else None


@dataclass(frozen=True, kw_only=True)
class EvalTsv(Selector):
    """One ``column`` of ``eval/{file}``, the line whose ``match`` columns equal ``row.arg`` split on ``/``
    (``table8.tsv`` by ``lang``; ``table2.tsv`` by ``role/lang``, e.g. ``target/az``)."""

    file: str = ""
    column: str = ""
    match: tuple[str, ...] = ("lang",)
    kind: Kind = "ppl"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        want = row.arg.split("/")
        for r in _tsv(run, self.file) or []:
            if [r[k] for k in self.match] == want:
                return _cell(r.get(self.column))
        return None


@dataclass(frozen=True, kw_only=True)
class Ppl(Selector):
    """Perplexity of model / inference method ``model`` (``{k}`` is filled from ``k``) on language ``row.arg``
    from ``eval/ppl.tsv``; ``avg``: the mean over the experiment's x-elm languages (``None`` if one is missing)."""

    model: str = ""
    k: int = 0
    kind: Kind = "ppl"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        name = self.model.format(k=self.k)
        got = {r["lang"]: _cell(r["ppl"]) for r in _tsv(run, "ppl.tsv") or [] if r["model"] == name}
        if row.arg != "avg":
            return got.get(row.arg)
        langs = list(run.exp.lm_data.languages) if run.exp.lm_data else []
        vals = [got.get(x) for x in langs]
        return sum(vals) / len(vals) if vals and all(v is not None for v in vals) else None  # type: ignore[misc]


def paper_seed(run: Run | None) -> bool:
    """Whether the run's experts branch from XGLM's released weights and keep its tokenizer (``lm_data.init: xglm``,
    x-elm Sec. 3.1), so that its perplexities are on the paper's scale."""
    lm = None if run is None else run.exp.lm_data
    return lm is not None and lm.init == "xglm"


@dataclass(frozen=True, kw_only=True)
class Relative(Selector):
    """``inner``'s perplexity where tokenizer and seed are the paper's (:func:`paper_seed`); otherwise (``init:
    scratch``: another tokenizer, another seed, perplexities on another scale) the % perplexity reduction over
    ``base`` in the same row, ``100 (base - x) / base``, compared with the same reduction computed from the
    paper's printed ``base_column`` (the base column itself is then not compared: 0 against 0)."""

    inner: Selector
    base: Selector
    base_column: str
    kind: Kind = "ppl"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        got = self.inner.value(results, run, row)
        if paper_seed(run) or not isinstance(got, float | int):
            return got  # type: ignore[return-value]
        base = self.base.value(results, run, row)
        return 100.0 * (base - got) / base if isinstance(base, float | int) and base else None

    def printed(self, run: Run | None, line: Any, value: float | None) -> float | None:
        if run is None or value is None or paper_seed(run):
            return value
        base = None if self.inner == self.base else paper_value(str(line[self.base_column]))
        return 100.0 * (base - value) / base if base else None


@dataclass(frozen=True, kw_only=True)
class XglmSeed(Selector):
    """The paper's XGLM column: our seed's perplexity, filled only where the seed is XGLM itself (``init: xglm``)."""

    inner: Selector
    kind: Kind = "ppl"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        return self.inner.value(results, run, row) if paper_seed(run) else None  # type: ignore[return-value]


def _shots(run: Run, row: Row) -> int:
    if row.arg not in ("zero", "few"):
        raise ValueError(f"x-elm ICL rows need Row.arg 'zero' or 'few', got {row.arg!r}")
    return 0 if row.arg == "zero" or run.exp.xelm is None else run.exp.xelm.icl.shots


@dataclass(frozen=True, kw_only=True)
class IclAvg(Selector):
    """``lm_icl``'s Table 3 entry of setting ``row.method``: ``accuracy`` (mean over languages) or ``win_rate``."""

    task: str = ""
    measure: str = "accuracy"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        doc = run.json("xelm/icl/summary.json") or {}
        got = doc.get("table3", {}).get(f"{self.task}@{_shots(run, row)}", {}).get(row.method, {})
        v = got.get(self.measure)
        return float(v) if isinstance(v, int | float) else None

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", "rate" if self.measure == "win_rate" else "score")


@dataclass(frozen=True, kw_only=True)
class IclLang(Selector):
    """Accuracy (%) of setting ``row.method`` on ``task`` in language ``lang`` (``icl/results.tsv``)."""

    task: str = ""
    lang: str = ""

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        path = run.root / "xelm" / "icl" / "results.tsv"
        if not path.is_file():
            return None
        shots = str(_shots(run, row))
        with path.open(encoding="utf-8", newline="") as f:
            for r in csv.DictReader(f, delimiter="\t"):
                if (r["task"], r["shots"], r["setting"], r["lang"]) == (self.task, shots, row.method, self.lang):
                    return _cell(r["accuracy"])
        return None


def _expert_info(run: Run, k: int, allocation: str) -> list[dict] | None:
    """``data.json`` of every expert of the k-expert set (k = 1: the dense model); ``None`` if one is missing."""
    ids = [DENSE] if k == 1 else [f"{allocation}-k{k}-e{i}" for i in range(k)]
    got = [run.json(f"xelm/experts/{e}/data.json") for e in ids]
    return None if any(g is None for g in got) else got  # type: ignore[return-value]


@dataclass(frozen=True, kw_only=True)
class Budget(Selector):
    """What the k-expert set of ``row.arg`` (``"1"``: the dense model) trained: ``tokens`` (summed over its k
    experts' ``tokens_seen``) or ``updates`` (each expert's; the smallest if they differ)."""

    measure: str = "tokens"
    allocation: str = "tfidf"
    kind: Kind = "count"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        info = _expert_info(run, int(row.arg), self.allocation)
        if info is None:
            return None
        if self.measure == "tokens":
            return float(sum(int(d["tokens_seen"]) for d in info))
        return float(min(int(d["updates"]) for d in info))


def _lm_meta(run: Run) -> dict | None:
    path = run.data / "lm" / "meta.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


@dataclass(frozen=True, kw_only=True)
class TextSize(Selector):
    """Size in GiB of our training text of language ``row.arg`` (``lm_data``'s ``meta.json`` ``bytes.train``);
    the mark is its share of the pretraining languages' total, as the paper brackets it."""

    kind: Kind = "size"

    def value(self, results: Results, run: Run, row: Row) -> float | None:
        got = ((_lm_meta(run) or {}).get("bytes") or {}).get("train", {}).get(row.arg)
        return got / GIB if isinstance(got, int) else None

    def mark(self, results: Results, run: Run, row: Row) -> str:
        meta = _lm_meta(run) or {}
        sizes = (meta.get("bytes") or {}).get("train", {})
        seen = meta.get("languages", [])
        if row.arg not in seen or row.arg not in sizes or not all(x in sizes for x in seen):
            return ""
        share = 100.0 * sizes[row.arg] / sum(sizes[x] for x in seen)
        return f" ({share:.1f}%)" if share >= 0.1 else f" ({share:.2f}%)"


_COLS = {"Dense": "dense", "TF-IDFtop1": "tfidf_top1", "TF-IDFens": "tfidf_ens", "Typ.": "typology"}
_LANGS = ["AR", "BG", "DE", "EL", "EN", "ES", "FR", "HI", "JA", "KO", "RU", "SW", "TR", "UR", "VI", "ZH"]

def describe(exp) -> str:
    """Caption line of an x-elm run: the LM's size and budgets, not the translation model's."""
    x, lm = exp.xelm, exp.lm_data
    if x is None or lm is None:
        return f"experiment `{exp.name}`: no x-elm section"
    return (f"experiment `{exp.name}`: x-elm LM on {len(lm.languages)} languages ({', '.join(lm.languages)}), "
            f"{x.lm.embed_dim}/{x.lm.ffn_dim}, {x.lm.layers} layers; seed LM {x.seed.updates:,} updates, experts "
            f"k={list(x.experts.k)} with {x.experts.updates:,} updates each")


_ROWS = {**{lang: Row("xelm", arg=lang.lower()) for lang in _LANGS}, "Avg.": Row("xelm", arg="avg")}
_HALF = "Ours: mc4_xelm's experts see 10.5B tokens each, half the paper's 21B-token models of this table."
_RELATIVE = ("Perplexities are compared with the paper's only for a run whose tokenizer and seed are XGLM-1.7B's "
             "(lm_data.init: xglm). Any other run (init: scratch, e.g. the embedded default) shows the % perplexity "
             "reduction over {base} in the same row instead, compared with the reduction the paper's printed "
             "numbers give.")
_SETTINGS = {"Dense": "dense", "Typ. (TRG)": "typology_trg", "Typ. (EN)": "typology_en",
             "TF-IDF (Top-1)": "tfidf_top1", "TF-IDF (Ens.)": "tfidf_ens"}
_TASKS = {"XNLI": "xnli", "XStoryCloze": "xstorycloze", "PAWS-X": "pawsx"}


def _icl_rows() -> dict:
    return {(setting, printed): Row(ours, arg="zero" if setting == "Zero-shot" else "few")
            for setting in ("Zero-shot", "Few-shot") for printed, ours in _SETTINGS.items()
            if not (setting == "Zero-shot" and ours == "typology_en")}


def _icl_langs(number: int, task: str) -> Binding:
    langs = [c for c in paper_tables.load("xelm", number).columns if c not in ("setting", "Model")]
    return Binding("xelm", f"table{number}", "mc4_xelm", describe=describe, rows=_icl_rows(),
                   columns={lang: IclLang(task=task, lang=lang.lower()) for lang in langs}, note=_HALF)


BINDINGS = {
    ("xelm", "table1"): Binding(
        "xelm", "table1", "mc4_xelm", describe=describe, rows=_ROWS,
        columns={"XGLM": XglmSeed(inner=Table1(column="seed")),
                 **{f"10.5B Training Tokens / {printed}": Relative(
                     inner=Table1(column=ours), base=Table1(column="dense"),
                     base_column="10.5B Training Tokens / Dense") for printed, ours in _COLS.items()}},
        note=_RELATIVE.format(base="Dense")),
    ("xelm", "table2"): Binding(
        "xelm", "table2", "mc4_xelm", describe=describe,
        rows={(group, lang): Row("xelm", arg=f"{group.lower()}/{lang.lower()}")
              for group, langs in (("Target", ("AZ", "HE", "PL", "SV")), ("Donor", ("TR", "AR", "RU", "EN")))
              for lang in langs},
        columns={"XGLM": XglmSeed(inner=EvalTsv(file="table2.tsv", column="seed", match=("role", "lang"))),
                 **{f"{top} / {printed}": Relative(
                     inner=EvalTsv(file="table2.tsv", column=ours, match=("role", "lang")),
                     base=EvalTsv(file="table2.tsv", column="dense", match=("role", "lang")),
                     base_column="x-elm Training / Dense")
                    for top, printed, ours in (("x-elm Training", "Dense", "dense"),
                                               ("x-elm Training", "TF-IDFens*", "tfidf_ens"),
                                               ("LAPT", "Dense", "lapt"), ("LAPT", "HMR", "hmr"))}},
        note="Ours: targets and donors of lm_data, xelm.hmr (mc4_xelm: az<-tr, he<-ar, pl<-ru, sv<-en as the paper); a "
             "donor row fills when it is the donor of one of our targets. The x-elm Training columns are our "
             "10.5B-token dense model and TF-IDF ensemble, the paper's are its 21B-token ones (Sec. 6.3): ours "
             "trained half as long; the LAPT columns build on 10.5B-token models in both. "
             + _RELATIVE.format(base="x-elm Training / Dense")),
    ("xelm", "table3"): Binding(
        "xelm", "table3", "mc4_xelm", describe=describe, rows=_icl_rows(),
        columns={f"{printed} / {measure}": IclAvg(task=task, measure=ours)
                 for printed, task in _TASKS.items()
                 for measure, ours in (("Acc.", "accuracy"), ("Win Rate", "win_rate"))},
        note=_HALF + " Win rates count our seed LM among the settings where the paper counts XGLM."),
    ("xelm", "table4"): Binding(
        "xelm", "table4", "mc4_xelm", describe=describe,
        rows={("10.5 B", str(k)): Row("xelm", arg=str(k)) for k in (1, 4, 8, 16)},
        columns={"# Tokens": Budget(measure="tokens"), "# updates": Budget(measure="updates")},
        note="Ours: tokens and updates the expert jobs trained (experts/{id}/data.json; a set's tokens summed over "
             "its k TF-IDF experts, k = 1 the dense model). # GPUs and grad acc. are hardware choices, not ours; "
             "mc4_xelm trains the 10.5B budget only."),
    ("xelm", "table5"): Binding(
        "xelm", "table5", "mc4_xelm", describe=describe,
        rows={printed: Row("lm_data", arg=printed.split()[0].lower())
              for printed in paper_tables.load("xelm", 5)["Language"]},
        columns={"mC4 Size (%)": TextSize()},
        note="Ours: UTF-8 size of our training text per language (data/{exp}/lm/meta.json, after dedup), in GiB "
             "as the caption; the share is of the pretraining languages' total. XGLM's corpus is not ours."),
    ("xelm", "table7"): Binding(
        "xelm", "table7", "mc4_xelm", describe=describe, rows=_ROWS,
        columns={"XGLM": XglmSeed(inner=Table1(column="seed")),
                 "Dense": Relative(inner=Table1(column="dense"), base=Table1(column="dense"), base_column="Dense"),
                 **{f"k={k} Experts / {printed}": Relative(inner=Ppl(model=model, k=k), base=Table1(column="dense"),
                                                           base_column="Dense")
                    for k in (4, 16)
                    for printed, model in (("TF-IDFtop1", "tfidf-k{k}-top1"), ("TF-IDFens", "tfidf-k{k}-ens"),
                                           ("Typ.", "typology-k{k}"))}},
        note=_RELATIVE.format(base="Dense")),
    ("xelm", "table8"): Binding(
        "xelm", "table8", "mc4_xelm", describe=describe,
        rows={**_ROWS, **{lang: Row("xelm", arg=lang.lower()) for lang in ("AZ", "HE", "PL", "SV")}},
        columns={"TF-IDF / top-1": Relative(inner=EvalTsv(file="table8.tsv", column="top1"),
                                            base=EvalTsv(file="table8.tsv", column="top1"),
                                            base_column="TF-IDF / top-1"),
                 **{f"Ens. / m={m}": Relative(inner=EvalTsv(file="table8.tsv", column=f"m{m}"),
                                              base=EvalTsv(file="table8.tsv", column="top1"),
                                              base_column="TF-IDF / top-1") for m in (2, 4, 8)}},
        note=_HALF + " m=8 is the full ensemble at mc4_xelm's main k = 8. " + _RELATIVE.format(base="TF-IDF / top-1")),
    ("xelm", "table9"): _icl_langs(9, "xnli"),
    ("xelm", "table10"): _icl_langs(10, "xstorycloze"),
    ("xelm", "table11"): _icl_langs(11, "pawsx"),
}
