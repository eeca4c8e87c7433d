"""The first screen of reports/index.html (lsnmt/report/headline.py): the answer before anything else, with the
scale (CPU or GPU, the minutes, "smoke test" when every system is degenerate), each system against naive, the claim
with its 95% intervals and sources; a parameter-only comparison is not called "differs"."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsnmt.io import write_json
from lsnmt.report.build import PAPERS, report
from lsnmt.report.headline import headline_md, run_info
from lsnmt.report.html import write_page
from lsnmt.report.runs import Results
from tests.report.fixtures import write_default_degenerate
from tests.report.test_claim_report import claim_summary

ROOT = Path(__file__).resolve().parents[2]


def _logs(root: Path) -> Path:
    """``logs/default`` as the stages write it: a train start line naming the device, three stages' end lines (one
    with its place in the run, as under DVC; the shared ``params`` stage's beside the experiment's folder)."""
    logs = root / "logs"
    (logs / "default" / "train").mkdir(parents=True)
    (logs / "default" / "train" / "naive.log").write_text(
        "2026-01-01 00:00:00,000 INFO stages.train: train: start (default, naive)\n"
        "2026-01-01 00:00:01,000 INFO lsnmt.train.trainer: train: 1,000 parameters (1,000 trained), 8 directions, "
        "10 pairs, 200 updates of 2,048 tokens x 1, device cpu, 2 threads, 1 rank(s)\n"
        "2026-01-01 00:01:00,000 INFO stages.train: train: done in 60 s\n",
        encoding="utf-8",
    )
    (logs / "default" / "evaluate.log").write_text(
        "2026-01-01 00:02:00,000 INFO stages.evaluate: [9/41] evaluate: done in 120 s\n", encoding="utf-8"
    )
    (logs / "params.log").write_text("2026-01-01 00:03:00,000 INFO stages.params: [10/41] params: done in 60 s\n")
    return logs


@pytest.fixture()
def site(tmp_path: Path) -> tuple[Results, Path, Path]:
    params, methods = write_default_degenerate(tmp_path / "results")
    write_json(tmp_path / "results" / "default" / "claim" / "summary.json", claim_summary())
    return Results(params, tmp_path / "results", ROOT / "reports" / "params.csv"), tmp_path / "reports", _logs(tmp_path)


def test_run_info_reads_the_device_and_the_stage_times(tmp_path: Path) -> None:
    info = run_info(_logs(tmp_path) / "default")
    assert info == {"seconds": 240, "stages": 3, "devices": ["cpu"]}


def test_the_answer_names_the_scale_and_puts_the_claim_first_on_a_smoke_test(site) -> None:
    results, _, logs = site
    text = headline_md(results, logs)
    assert "**Scale: CPU**, 3 stages, 4.0 minutes of stage time." in text
    assert "**Smoke test**" in text
    claim, translation = text.index("The claim at small scale"), text.index("Translation:")
    assert claim < translation  # degenerate translation: the claim is the answer
    assert (
        "| LMS > naive at equal shared capacity | lms vs naive | +10.00 [+8.50, +11.50] | 2/2 | established | "
        "LMS-FD Sec. 2, Table 2 |"
    ) in text  # interval, seeds, verdict, source
    assert "| 1/2 | not established | LSL Sec. 1, Table 1 |" in text
    assert "smoke test: degenerate output, no verdict" in text and "(baseline)" in text


def test_the_page_opens_with_the_answer(site) -> None:
    results, out, logs = site
    page = write_page([], results, out, PAPERS, logs).read_text(encoding="utf-8")
    body = page[page.index("<body>") :]
    first = body.index('id="answer"')
    assert first < body.index('id="results"') and first < 200  # right after the page's title
    assert body.index("<strong>Scale: CPU</strong>") < body.index("<table")


def test_a_parameter_only_comparison_is_not_called_differs(site, tmp_path: Path) -> None:
    """LMS-FD Table 2 with no paper-scale run: only its #params column is compared (our counts of the papers'
    models), and some count is out of tolerance; "differs" would suggest a score was compared."""
    results, _, _ = site
    items = report(results, tmp_path / "out")
    table2 = next(it for it in items if it.paper == "lmsfd" and it.label == "Table 2")
    assert "score: 0 of" in table2.detail and "params:" in table2.detail
    assert table2.status == "params differ"  # 12 of its 16 counts within 2%, no score compared
    assert "params differ" in (tmp_path / "out" / "index.html").read_text(encoding="utf-8")
