"""Degenerate output in the report: a ``‡`` after a degenerate system's scores and after a direction the paired
bootstrap left untested (LSL Table 8), and a withheld win ratio read as ``n/a (degenerate)``, never compared."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsnmt.experiment.params import Params
from lsnmt.report import paper as paper_tables
from lsnmt.report import render
from lsnmt.report.cells import DEGENERATE, NO_VERDICT
from lsnmt.report.paper_table import Built, build
from lsnmt.report.runs import Results
from lsnmt.report.specs import BINDINGS
from tests.report.fixtures import write_evaluate

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def params() -> Params:
    return Params.load(ROOT / "params.yaml")


def _table(results: Results, paper: str, number: str) -> Built:
    return build(paper_tables.meta(paper, number), paper_tables.load(paper, number),
                 BINDINGS[(paper, f"table{number}")], results)


def _cell(built: Built, label: str, column: str):
    (hit,) = (c for c in built.cells if c.keys[0] == label and c.column == column)
    return hit


def test_lmsfd_table3_marks_degenerate_systems_and_withholds_their_win_ratio(tmp_path: Path, params: Params) -> None:
    exp = params.get("opus100")
    methods = ["naive", "lms", "lms_fd", "lms_fd_ls"]
    flags = {"systems": {"lms_fd_ls": "length ratio 0.10 < 0.3"}, "pairs": {"lms_fd_ls": "lms_fd_ls: length ratio"}}
    write_evaluate(tmp_path / "results", exp, methods, lambda m, s, t: 20.0 + methods.index(m), degenerate=flags)
    built = _table(Results(params, tmp_path / "results", ROOT / "reports" / "params.csv"), "lmsfd", "3")
    ls, share = "LMS+FD-LS, d = 64", "LMS+FD-Share, d = 64"
    assert _cell(built, ls, "en→xx / all").mark == DEGENERATE and _cell(built, share, "en→xx / all").mark == ""
    wr = _cell(built, ls, "en→xx / WR (%)")
    assert wr.ours == NO_VERDICT and wr.mark == "" and wr.delta is None
    header, rows = render.grid(built)
    line = next(r for r in rows if r[0] == ls)
    assert line[header.index("en→xx / WR (%) (ours)")] == NO_VERDICT
    assert line[header.index("en→xx / all (ours)")] == f"{3.0:.2f}{DEGENERATE}"  # gain over naive, marked
    assert "rate: " in built.detail and built.status != "reproduced"


def test_lsl_table8_marks_untested_directions(tmp_path: Path, params: Params) -> None:
    exp = params.get("flores10_lsl")
    flags = {"pairs": {"lsl_nas_dense": "both below 1.0 BLEU"}}
    write_evaluate(tmp_path / "results", exp, ["naive", "lsl_nas_dense"], lambda m, s, t: 0.5,
                   metrics=("chrf", "spbleu-flores101"), not_significant=frozenset({"de-pt"}), degenerate=flags)
    built = _table(Results(params, tmp_path / "results", ROOT / "reports" / "params.csv"), "lsl", "8")
    marks = {c.mark for c in built.cells if c.method is not None}
    assert marks == {DEGENERATE}  # untested: never a † (not significant), never a bare value (significant)
