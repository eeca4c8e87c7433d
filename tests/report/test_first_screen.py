"""The report's first screen after the first run: every link of ``index.html`` resolves (the ids are computed once),
``reports/README.md`` opens with the same answer, the claim's task, budget and caveats come from its summary,
its verdicts cannot be read as "not displayed", and the banner names the machine and versions that ran (the run
records), not the machine that builds the report. Each test failed on the report before this change."""

from __future__ import annotations

import html.parser
import re
from pathlib import Path
from typing import Any

import pytest

from lsnmt import record
from lsnmt.experiment.params import Params
from lsnmt.io import write_json
from lsnmt.report.build import report
from lsnmt.report.headline import headline_md
from lsnmt.report.runs import Results
from tests.report.fixtures import write_default_degenerate
from tests.report.test_claim_report import _vs, claim_summary

ROOT = Path(__file__).resolve().parents[2]
RECORD = {
    "python": "3.11.7",
    "torch": "2.13.0",
    "cuda": "12.8",
    "gpus": ["NVIDIA H200"],
    "device": "cuda",
    "commit": "0123456789abcdef",
    "dirty": True,
    "machine": {"host": "gpu-node-7", "processor": "Imaginary CPU 9000", "cores": 64, "system": "Linux 6.1"},
}


def summary_with_caveats() -> dict[str, Any]:
    """The fixture claim with the first run's shape: the one claim established against a dense model that scores
    below naive, naive still learning at the end, and p-values that repeat (2 seeds)."""
    s = claim_summary()
    s["systems"]["wide"] |= {
        "bleu": 55.0,
        "bleu_ci": [53.0, 57.0],  # below naive's 60.0
        "per_seed": {"1": {"bleu": 54.0, "exact": 50.0}, "2": {"bleu": 56.0, "exact": 50.0}},
    }
    s["comparisons"] = [
        _vs("wide", "naive", -5.0, 0.248),
        _vs("lms", "naive", 10.0, 0.248),
        _vs("fd", "naive", 4.0, 0.248),
        _vs("lsl", "naive", 1.0, 0.248),
        _vs("lms", "wide", 9.0, 0.01),
    ]
    for claim, status in zip(
        s["claims"], ("not shown", "shown", "not shown", "not shown", "not measured"), strict=True
    ):
        claim["status"] = status
    return s


@pytest.fixture()
def built(tmp_path: Path) -> tuple[Path, list]:
    """A whole report (``lsnmt.report.build.report``) on fixture results: evaluation, claim, run records."""
    params, methods = write_default_degenerate(tmp_path / "results")
    write_json(tmp_path / "results" / "default" / "claim" / "summary.json", summary_with_caveats())
    write_json(
        tmp_path / "results" / "default" / "evaluate" / record.NAME, {**RECORD, "train": {m: RECORD for m in methods}}
    )
    results = Results(params, tmp_path / "results", ROOT / "reports" / "params.csv")
    items = report(results, tmp_path / "reports", logs=tmp_path / "logs")
    return tmp_path / "reports", items


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        got = dict(attrs)
        if got.get("id"):
            self.ids.add(str(got["id"]))
        if tag == "a" and got.get("href"):
            self.hrefs.append(str(got["href"]))


def test_every_internal_link_of_the_page_resolves(built: tuple[Path, list]) -> None:
    """Every ``#id`` link has its target on the page and every relative link names a file that exists (the first
    screen's link to the claim table was "#ours-small-scale-claim-default", its section "...-claims-default")."""
    out, _ = built
    page = _Links()
    page.feed((out / "index.html").read_text(encoding="utf-8"))
    anchors = [h for h in page.hrefs if h.startswith("#")]
    assert [h for h in anchors if h[1:] not in page.ids] == []
    assert len(anchors) >= 6 and "#ours-small-scale-claims-default" in anchors
    files = [h for h in page.hrefs if not h.startswith("#") and not re.match(r"^[a-z]+:", h)]
    assert len(files) > 50 and [h for h in files if not (out / h).exists()] == []


def test_readme_opens_with_the_same_answer(built: tuple[Path, list]) -> None:
    out, _ = built
    readme = (out / "README.md").read_text(encoding="utf-8")
    lines = readme.splitlines()
    assert lines[0] == "# lsnmt: results of `default`" and lines[2] == "## The answer: `default`"
    answer = readme[: readme.index("## Every table and figure")]
    page = (out / "index.html").read_text(encoding="utf-8")
    for claim in ("LMS &gt; naive at equal shared capacity", "LSL &gt; a naive of LSL"):
        assert claim.replace("&gt;", ">") in answer and f"<td>{claim}" in page
    assert "[the full claim table](tables/ours/claim-default.md)" in answer  # a file in README, a section here
    assert 'href="#ours-small-scale-claims-default">the full claim table</a>' in page
    assert answer.count("**Scale: CPU**") == 0 and "**Scale: GPU**" in answer  # the records say CUDA


def test_the_claim_names_its_synthetic_task_budget_and_caveats(built: tuple[Path, list]) -> None:
    out, _ = built
    answer = (out / "README.md").read_text(encoding="utf-8").split("## Every table and figure")[0]
    claim = answer[answer.index("### The claim at small scale") :]
    assert (
        "**A synthetic task, not translation**: 3 artificial languages (en, de, fr; word order reversed: de; "
        "scrambled: fr)" in claim
    )
    assert "every system trains 500 updates of 1,000 tokens per seed (seeds 1, 2)" in claim
    # why the one established claim holds, from the summary's numbers
    assert (
        "*LMS > a naive of LMS's total size* is established against wide (62,000 parameters), which scores "
        "below naive itself (50,000): 55.0 against 60.0 BLEU, lower on 2 of 2 seeds."
    ) in claim
    assert "Naive was still learning when the budget ended" in claim and "seed 1: 1.500 → 1.250" in claim
    assert "only 3 seed draws" in claim and "3 of the claims' 4 p-values are 0.248" in claim
    assert claim.index("Budget") < claim.index("| claim |") < claim.index("established against wide")


def test_verdicts_cannot_be_read_as_not_displayed(built: tuple[Path, list]) -> None:
    out, _ = built
    page = (out / "index.html").read_text(encoding="utf-8")
    first = page[page.index('id="answer"') : page.index('id="results"')]
    assert "not shown" not in first and "<td>not established</td>" in first and "<td>not tested</td>" in first
    table = (out / "tables" / "ours" / "claim-default.md").read_text(encoding="utf-8")
    assert "| not shown" not in table and "| established (" in table


def test_the_banner_reads_the_run_records_not_the_report_machine(built: tuple[Path, list]) -> None:
    out, _ = built
    page = (out / "index.html").read_text(encoding="utf-8")
    first = page[page.index('id="answer"') : page.index("The claim at small scale")]
    assert (
        "Trained and evaluated on gpu-node-7 (Imaginary CPU 9000, 64 cores, 1 x NVIDIA H200), Python 3.11.7, "
        "torch 2.13.0 (CUDA 12.8), commit 0123456 + uncommitted changes (dirty)"
    ) in first
    assert record.processor() not in first  # this machine, which built the report


def test_results_without_records_say_so(tmp_path: Path) -> None:
    params = Params.load(ROOT / "params.yaml")
    results = Results(params, tmp_path / "results", ROOT / "reports" / "params.csv")
    text = headline_md(results, tmp_path / "logs")
    assert "Versions and machine: not recorded" in text and record.processor() not in text
