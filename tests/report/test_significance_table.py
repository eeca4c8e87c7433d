"""The ``ours/significance`` table: every significance count LSL prints, ours from the evaluate summary."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from lsnmt.experiment.params import Params
from lsnmt.report.runs import Results
from lsnmt.report.specs import EXTRA
from lsnmt.report.specs.significance import PRINTED, significance_table

ROOT = Path(__file__).resolve().parents[2]


def _tests(better: int, worse: int, degenerate: int = 0) -> dict:
    return {"chrf": {"outcomes": {"better": better, "worse": worse, "not_significant": 90 - better - worse - degenerate,
                                  "degenerate": degenerate}, "directions": {}}}


def test_counts_come_from_the_baseline_tests_and_the_comparisons(tmp_path: Path) -> None:
    params = Params.load(ROOT / "params.yaml")
    summary = {"baseline": "naive", "significance": {"lsl_nas_dense": _tests(80, 2)},
               "comparisons": {"lsl_nas vs adapters_enc_srctgt_256": {"method": "lsl_nas",
                                                                       "reference": "adapters_enc_srctgt_256",
                                                                       "tests": _tests(30, 1, 3)},
                               "lsl_nas vs ls_ffn": {"method": "lsl_nas", "reference": "ls_ffn",
                                                     "not_run": "not evaluated in this run: ls_ffn"}}}
    out = tmp_path / "results" / "flores10_lsl" / "evaluate"
    out.mkdir(parents=True)
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")
    items = significance_table(Results(params, tmp_path / "results", tmp_path / "none.csv"), tmp_path / "reports")
    assert items[0].status == "ours" and significance_table in EXTRA
    with open(tmp_path / "reports" / "tables" / "ours" / "significance.csv", encoding="utf-8") as fh:
        rows = {r["comparison"]: r for r in csv.DictReader(fh)}
    assert len(rows) == len(PRINTED)
    assert rows["lsl_nas_dense vs naive"]["ours: significant"] == "82 of 90 (80 better, 2 worse)"
    assert rows["lsl_nas_dense vs naive"]["paper: significant"] == "84 of 90"
    assert rows["lsl_nas vs adapters_enc_srctgt_256"]["ours: significant"] == (
        "31 of 90 (30 better, 1 worse, 3 untested (degenerate))")
    assert rows["lsl_nas vs ls_ffn"]["ours: significant"] == "not run (not evaluated in this run: ls_ffn)"
    assert rows["lsl_nas vs ls_attention"]["ours: significant"] == "not run (not in evaluate.comparisons)"
    assert rows["lsl_nas_sd_dense vs sd_adapters_512"]["ours: significant"].startswith("not configured")


def test_every_printed_comparison_is_configured() -> None:
    """Each computable count of PRINTED is tested by the evaluate stage of its experiment: against the baseline,
    or listed in ``evaluate.comparisons``."""
    params = Params.load(ROOT / "params.yaml")
    for p in PRINTED:
        if p.note:
            continue
        ev = params.get(p.experiment).evaluate
        assert p.reference == ev.baseline or (p.method, p.reference) in ev.comparisons, p
