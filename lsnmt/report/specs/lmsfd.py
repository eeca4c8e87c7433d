"""LMS-FD (Xu et al.) tables bound to our runs: IWSLT'14 (Tables 1-2), OPUS-100 (Table 3), OPUS-15 (Tables 6, 9).

Scores are the experiment's primary metric (spBLEU with the FLORES-200 tokenizer at paper scale, Sec. 3.2);
rows other than the naive model print gains over it (Tables 1-3, 6). FD / FD-LS and LMS+FD-Share / -LS are one
trained model each, read through its two routes as in the paper: systems ``<method>`` and ``<method>_ls``
(``lsnmt/methods.py``). ``#params`` columns come from
``reports/params.csv`` (our counts of the paper's configurations). Tables 4, 5, 7, 8 (NER, QA on XLM-R) are
bound in ``lsnmt/report/specs/nerqa.py``.
"""

from __future__ import annotations

from lsnmt.report.cells import Avg, Both, Group, Params, Row, WinRatio
from lsnmt.report.paper_table import Binding

PAPER = "LMS-FD (Xu et al. 2023)"
IWSLT_LANGS = ("ar", "de", "es", "fa", "he", "it", "nl", "pl")


def _iwslt_columns(table: str) -> dict:
    cols: dict = {lang: Both(lang=lang) for lang in IWSLT_LANGS}
    cols["avg."] = Avg(subset="all")
    cols["#params / Training"] = Params(which="train", paper=PAPER, table=table)
    cols["#params / Inference"] = Params(which="inference", paper=PAPER, table=table)
    return cols


def _opus_columns(table: str | None, extra: bool = False) -> dict:
    cols: dict = {}
    for side, label in (("en-xx", "en→xx"), ("xx-en", "xx→en")):
        for grp, printed in (("high", "high"), ("medium", "med"), ("low", "low")):
            cols[f"{label} / {printed}"] = Group(side=side, group=grp)
        cols[f"{label} / all"] = Avg(subset=side)
        cols[f"{label} / WR (%)"] = WinRatio(subset=side)
    if extra:
        # params.csv's Table 9 rows already count the extra parameters over the naive model
        cols["extra #params / Training"] = Params(which="train", paper=PAPER, table="9")
    elif table:
        cols["#params / Training"] = Params(which="train", paper=PAPER, table=table)
        cols["#params / Inference"] = Params(which="inference", paper=PAPER, table=table)
    return cols


BINDINGS = {
    ("lmsfd", "table1"): Binding(
        "lmsfd", "table1", "iwslt14", gains=True, columns=_iwslt_columns("1"),
        rows={"Naive MMT": "naive", "FD": "fd", "FD-LS": Row("fd_ls", "fd-ls")}),
    ("lmsfd", "table2"): Binding(
        "lmsfd", "table2", "iwslt14", gains=True, columns=_iwslt_columns("2"),
        rows={"Naive MMT": "naive", "Switch Transformer": "switch", "CLSR": "clsr",
              "CLSR*": Row("clsr_star", "clsr*"), "LMS, lang-wise": Row("lms_langwise", "lms-langwise"),
              "LMS": "lms", "LMS+FD-Share": Row("lms_fd", "lms+fd-share"),
              "LMS+FD-LS": Row("lms_fd_ls", "lms+fd-ls")}),
    ("lmsfd", "table3"): Binding(
        "lmsfd", "table3", "opus100", gains=True, columns=_opus_columns("3"),
        rows={"Naive MMT": "naive", "Switch Transformer": "switch", "CLSR": "clsr",
              "LMS, lang-wise, d = 64": Row("lms_langwise", "lms-langwise-d64"), "LMS, d = 64": Row("lms", "lms-d64"),
              "LMS+FD-Share, d = 64": Row("lms_fd", "lms+fd-share-d64"),
              "LMS+FD-LS, d = 64": Row("lms_fd_ls", "lms+fd-ls-d64"), "LMS, d = 16": Row("lms_d16", "lms-d16"),
              "LMS+FD-Share, d = 16": Row("lms_fd_d16", "lms+fd-share-d16"),
              "LMS+FD-LS, d = 16": Row("lms_fd_d16_ls", "lms+fd-ls-d16"), "LMS, d = 4": Row("lms_d4", "lms-d4")}),
    ("lmsfd", "table6"): Binding(
        "lmsfd", "table6", "opus15", gains=True,
        columns={"avg. BLEU": Avg(subset="all"), "WR (%)": WinRatio(subset="all"),
                 "#params": Params(which="train", paper=PAPER, table="6")},
        rows={"Naive MMT": "naive", "LMS, ffn only (default)": Row("lms", "lms-ffn-d20"),
              "LMS, att only": Row("lms_att", "lms-att-d20"), "LMS, att+ffn": Row("lms_att_ffn", "lms-att+ffn-d20")}),
    ("lmsfd", "table9"): Binding(
        "lmsfd", "table9", "opus15", columns=_opus_columns(None, extra=True),
        rows={"Naive MMT": "naive",
              **{f"Switch Transformer, E = {e}": Row("switch" if e == 16 else f"switch_e{e}", f"switch-e{e}")
                 for e in (4, 8, 12, 16)},
              **{f"LMS, d = {d}": Row("lms" if d == 20 else f"lms_d{d}", f"lms-d{d}")
                 for d in (4, 12, 20, 28, 36, 44, 52, 60)}}),
}
