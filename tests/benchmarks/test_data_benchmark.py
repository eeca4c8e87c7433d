"""``benchmarks/data.py`` runs every data stage on a tiny synthetic corpus, so that it cannot rot again (its figures
are not tested: ``docs/benchmarks.md`` has a real run's)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import data as bench
import data_corpus


def test_the_parent_names_the_corpus_languages() -> None:
    assert bench.LANGS == ("en", *data_corpus.SHARES)


@pytest.mark.long
@pytest.mark.timeout(600)
def test_every_stage_runs_on_a_tiny_corpus(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = bench.main(
        [
            "--pairs",
            "3000",
            "--docs",
            "240",
            "--valid-docs",
            "30",
            "--workdir",
            str(tmp_path),
            "--vocab-size",
            "300",
            "--spm-sentences",
            "300",
            "--fit-docs",
            "120",
            "--k",
            "2",
            "--threads",
            "1",
            "--json",
            str(tmp_path / "rows.json"),
        ]
    )
    assert [r.stage for r in rows] == list(bench.STAGES)
    for r in rows:
        assert r.wall > 0 and r.cpu > 0 and r.peak_mib > 10 and r.reference > 0, r
    assert len(json.loads((tmp_path / "rows.json").read_text())) == len(rows)
    mt, xelm = tmp_path / "3000" / "mt", tmp_path / "3000" / "xelm"
    report = json.loads((mt / "prepared" / "report.json").read_text())
    synth = [c["synth"] for c in report["train"].values()]
    assert sum(c["dropped"]["duplicate"] for c in synth) > 0 and all(c["heldout"] > 0 for c in synth)
    assert json.loads((mt / "bin" / "meta.json").read_text())["shards"]
    assert set(json.loads((xelm / "lm" / "meta.json").read_text())["docs"]["train"]) == set(bench.LANGS)
    assert (xelm / "cluster" / "tfidf" / "k2" / "assign.npy").is_file()
    table = capsys.readouterr().out
    assert bench.HEADER in table and "| encode | 3,000 |" in table and "| tfidf | 240 |" in table
