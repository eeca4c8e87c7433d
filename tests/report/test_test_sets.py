"""The report's ``ours/test-sets-<exp>`` table: every system's averages on the held-out in-domain test set beside
the primary (FLORES) one, read from ``summary.json`` and its ``test_sets``."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from lsnmt.experiment.params import Params
from lsnmt.report import specs
from lsnmt.report.cells import DEGENERATE
from lsnmt.report.runs import Results
from lsnmt.report.specs.extra import heldout_table

ROOT = Path(__file__).resolve().parents[2]
METHODS = ("naive", "fd", "fd_ls")


def _set(test_set: str, label: str, base: float, degenerate: dict, directions: int) -> dict:
    """One test set's summary as ``lsnmt.eval.summary.set_summary`` writes it (the keys the table reads)."""
    scores = {m: {metric: {"averages": {"en-xx": base + i, "xx-en": base + i + 0.5, "all": base + i + 0.25}}
                  for metric in ("bleu", "chrf")} for i, m in enumerate(METHODS)}
    return {"test_set": test_set, "label": label, "methods": list(METHODS), "metrics": ["bleu", "chrf"],
            "scores": scores, "degenerate": {"systems": degenerate, "pairs": {}},
            "direction_sets": {"all": [f"d{i}" for i in range(directions)]}}


def _results(tmp_path: Path, held: bool = True) -> Results:
    summary = _set("test", "out-of-domain (flores200, no training corpus)", 10.0, {}, 18)
    tatoeba = _set("test.tatoeba", "in-domain held-out (tatoeba, disjoint from training)", 30.0,
                   {"fd_ls": "length ratio 0.10 < 0.3"}, 16)
    summary["test_sets"] = {"test.tatoeba": tatoeba} if held else {}
    out = tmp_path / "results" / "default" / "evaluate"
    out.mkdir(parents=True)
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    return Results(Params.load(ROOT / "params.yaml"), tmp_path / "results", ROOT / "reports" / "params.csv")


def test_held_out_averages_beside_flores(tmp_path: Path) -> None:
    (item,) = heldout_table(_results(tmp_path), tmp_path / "reports")
    assert item.paper == "ours" and item.status == "ours" and "`test`, `test.tatoeba`" in item.caption
    assert item.links == ("tables/ours/test-sets-default.md", "tables/ours/test-sets-default.csv")
    with (tmp_path / "reports" / item.links[1]).open(encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert [(r["method"], r["metric"]) for r in rows] == [(m, x) for m in METHODS for x in ("bleu", "chrf")]
    naive = rows[0]
    assert (naive["test en-xx"], naive["test all"], naive["test.tatoeba xx-en"]) == ("10.00", "10.25", "30.50")
    fd_ls = next(r for r in rows if r["method"] == "fd_ls" and r["metric"] == "bleu")
    assert fd_ls["test all"] == "12.25" and fd_ls["test.tatoeba all"] == f"32.25{DEGENERATE}"  # degenerate there only
    md = (tmp_path / "reports" / item.links[0]).read_text(encoding="utf-8")
    assert "- `test.tatoeba`: in-domain held-out (tatoeba, disjoint from training); `all` over its 16 directions" in md
    assert "- `test`: out-of-domain (flores200, no training corpus); `all` over its 18 directions" in md
    assert "| method | metric | test en-xx | test xx-en | test all | test.tatoeba en-xx |" in md
    assert heldout_table in specs.EXTRA


def test_no_table_without_a_second_test_set(tmp_path: Path) -> None:
    assert heldout_table(_results(tmp_path, held=False), tmp_path / "reports") == []
    assert not (tmp_path / "reports").exists()
