"""CLM (Liu et al. 2022) tables bound to our runs: OPUS-100 (Tables 1, 3, 9; ATP Tables 4, 10, 11; similarity
search Tables 5, 8), WMT-14 (Table 2), IWSLT-17 zero-shot (Table 6).

CLM trains separate en-xx and xx-en models (Sec. 4.1, 4.3): Tables 1, 2, 3 and 9 read their en-xx columns from
``opus100_clm_enxx`` / ``wmt14_enxx`` and their xx-en columns from ``opus100_clm_xxen`` / ``wmt14_xxen``
(:class:`~lsnmt.report.cells.In`); the ATP tables (sCLM on en-xx, Sec. 5.1) read the en-xx run, the similarity
search (encoder representations on xx-en, Sec. 5.2) the xx-en run. Table 6's "+mCLM-D" is sCLM-E plus mCLM-D
(Sec. 5.3), method ``sclm_e_mclm_d``.

Scores are BLEU (the experiments' primary metric); rows other than the multilingual baseline print gains over
it. "Model Size" comes from ``reports/params.csv``. Tables 4, 10 and 11 compare the top-5 languages by cosine
similarity of sCLM's average token-level feature proportions (ATP; ``lsnmt/eval/atp.py``) in the encoder and
the decoder. Table 5 reads the evaluate stage's similarity search (``summary.json`` ``similarity``: top-1
accuracy averaged over the pairs with English, ``english_centric``, and without, ``zero_shot``) on the multi-way
sets named :data:`TED` and :data:`FLORES`; Table 8 lists the languages of the Flores set that search used, per
resource group of the run (``summary.json`` ``groups``; OPUS-100: by training size). ``opus100_clm_xxen`` does not
configure these sets yet (it needs ``ted_multiway`` and ``flores200`` sources with a ``multiway`` split, and
``evaluate.similarity_sets`` with ``multiway_max_sentences: 100``; the TED URL is unconfirmed, see
``lsnmt/data/sources/ted.py``), so both tables read "not run" until it does. Not bound: Table 6's Europarl and
WMT-5 rows (not defined as experiments here) and Table 9's decoding speed (measured by
``benchmarks/clm_speed.py``, not by the pipeline).
"""

from __future__ import annotations

from dataclasses import dataclass

from lsnmt.report import paper as paper_tables
from lsnmt.report.cells import (
    Avg,
    DataCount,
    Group,
    In,
    Kind,
    Params,
    Row,
    Selector,
    SimilarAt,
    Similarity,
    SimilarList,
    WinRatio,
)
from lsnmt.report.paper_table import Binding
from lsnmt.report.runs import Results, Run

PAPER = "CLM (Liu et al. 2022)"
TED, FLORES = "ted_multiway", "flores200"
"""The multi-way source names (``data.sources[].name``) of CLM's similarity-search sets (Sec. 5.2.1)."""


@dataclass(frozen=True, kw_only=True)
class SearchLanguages(Selector):
    """The non-pivot languages of ``corpus`` that ``row.method``'s similarity search used, in resource group
    ``row.arg`` (``summary.json`` ``groups``), sorted and comma-separated as CLM Table 8 prints them."""

    corpus: str = FLORES
    kind: Kind = "text"

    def value(self, results: Results, run: Run, row: Row) -> str | None:
        summary = run.summary or {}
        langs = summary.get("similarity", {}).get(row.method, {}).get(self.corpus, {}).get("languages")
        groups = summary.get("groups", {}).get("languages", {})
        if not isinstance(langs, list):
            return None
        return ", ".join(sorted(x for x in langs if x != run.exp.data.pivot and groups.get(x) == row.arg))


def _columns(table: str | tuple[str, ...], groups: bool = True, experiment: str = "opus100",
             xxen: str = "opus100_clm_xxen") -> dict:
    """Model Size, then the en-xx columns (the binding's experiment, the one-to-many models) and the xx-en columns
    (``xxen``, the many-to-one models: CLM trains the two separately, Sec. 4.1, 4.3)."""
    cols: dict = {"Model Size": Params(which="train", paper=PAPER, table=table, experiment=experiment)}
    for side in ("en-xx", "xx-en"):
        sels: dict[str, Selector] = {}
        if groups:
            for grp, printed in (("low", "Low"), ("medium", "Med"), ("high", "High")):
                sels[f"{side} / {printed}"] = Group(side=side, group=grp)
        sels[f"{side} / All"] = Avg(subset=side)
        sels[f"{side} / WR"] = WinRatio(subset=side)
        cols.update({h: sel if side == "en-xx" else In(experiment=xxen, inner=sel) for h, sel in sels.items()})
    return cols


def _codes(table: int) -> list[str]:
    return list(paper_tables.load("clm", table)["Code"])


def _atp_bindings() -> dict:
    out = {}
    for table, side in ((10, "encoder"), (11, "decoder")):
        out[("clm", f"table{table}")] = Binding(
            "clm", f"table{table}", "opus100_clm_enxx", columns={"Similar Languages": SimilarList(side=side)},
            rows={code: Row("sclm", arg=code) for code in _codes(table)})
    langs = {"it", "ru", "hi", "tr"}
    out[("clm", "table4")] = Binding(
        "clm", "table4", "opus100_clm_enxx", rows={str(r): Row("sclm", arg=str(r)) for r in range(1, 6)},
        columns={f"{lang} / {s}": SimilarAt(lang=lang, side="encoder" if s == "enc" else "decoder")
                 for lang in sorted(langs) for s in ("enc", "dec")})
    return out


BINDINGS = {
    ("clm", "table1"): Binding(
        "clm", "table1", "opus100_clm_enxx", gains=True, columns=_columns("1"),
        rows={"Multilingual": "naive", "+Adapter": "adapter", "+CLSR": "clsr", "Deep Transformer": "deep",
              "sCLM♢": Row("sclm", "sclm-k280"), "mCLM♢": Row("mclm", "mclm-k134")}),
    ("clm", "table2"): Binding(
        "clm", "table2", "wmt14_enxx", gains=True,
        columns=_columns("2", experiment="wmt14", xxen="wmt14_xxen"),
        rows={"Multilingual": "naive", "+Adapter": "adapter", "+CLSR": "clsr", "Deep Transformer": "deep",
              "sCLM♢": Row("sclm", "sclm-k35"), "mCLM♢": Row("mclm", "mclm-k35")},
        note="Low / Med / High: the paper groups WMT-14 by data size without printing thresholds; ours cut the "
             "training pairs at evaluate.group_thresholds (OPUS-100's 0.1M / 0.9M, our choice)."),
    ("clm", "table3"): Binding(
        "clm", "table3", "opus100_clm_enxx", gains=True, columns=_columns(("3", "1")),
        rows={"Multilingual": "naive", "LS": Row("clm_ls", "ls"), "sCLM": Row("sclm_k94", "sclm"),
              "sCLM-E": Row("sclm_e", "sclm-E"), "sCLM-D": Row("sclm_d", "sclm-D"), "mCLM": Row("mclm_k94", "mclm"),
              "mCLM-E": Row("mclm_e", "mclm-E"), "mCLM-D": Row("mclm_d", "mclm-D"),
              "Dedicated": Row("clm_dedicated", "dedicated")}),
    ("clm", "table6"): Binding(
        "clm", "table6", "iwslt17_zeroshot",
        rows={"IWSLT-17": In(experiment="iwslt17_zeroshot", inner=Avg(subset="zero-shot"))},
        columns={"Multilingual": "naive", "+sCLM-E": "sclm_e", "+mCLM-D": "sclm_e_mclm_d"}),
    ("clm", "table9"): Binding(
        "clm", "table9", "opus100_clm_enxx", gains=True, columns=_columns(("9", "1"), groups=False),
        rows={"Multilingual": "naive", "+Adapter": "adapter", "+CLSR": "clsr", "sCLM-top": "sclm_top",
              "mCLM-top": "mclm_top", "sCLM": Row("sclm_k194", "sclm"), "mCLM": Row("mclm", "mclm")},
        note="sCLM: the k=194 model on both sides (caption; en-xx and xx-en keep one configuration), not "
             "Table 1's sCLM♢ (k=280 / 560)."),
    ("clm", "table7"): Binding(
        "clm", "table7", "iwslt17_zeroshot", on_default=False,
        rows={p: Row("data", arg=p) for p in ("En-It", "En-Nl", "En-Ro", "It-Ro", "Nl-Ro", "It-Nl")},
        columns={s: DataCount(split=s) for s in ("train", "valid", "test")},
        note="Ours: pairs in our prepared IWSLT-17 data (after the prepare filters; valid / test unfiltered)."),
    ("clm", "table5"): Binding(
        "clm", "table5", "opus100_clm_xxen", rows={"Multilingual": "naive", "sCLM": "sclm", "mCLM": "mclm"},
        columns={f"{side} / {name}": Similarity(corpus=corpus, part=part)
                 for side, part in (("English-Centric", "english_centric"), ("Zero-Shot", "zero_shot"))
                 for name, corpus in (("TED", TED), ("Flores", FLORES))},
        note="Top-1 accuracy (%) of cosine retrieval with mean-pooled encoder outputs, sentences encoded as "
             "xx-en sources (lsnmt/eval/similarity.py)."),
    ("clm", "table8"): Binding(
        "clm", "table8", "opus100_clm_xxen", columns={"Language": SearchLanguages(corpus=FLORES)},
        rows={printed: Row("naive", arg=ours) for printed, ours in (("Low", "low"), ("Med", "medium"),
                                                                     ("High", "high"))},
        note="Ours: the Flores languages our similarity search used, grouped by the run's resource groups."),
    **_atp_bindings(),
}
