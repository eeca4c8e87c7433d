"""Readers of the WikiANN split files and the TyDiQA-GoldP JSON, on the embedded fixtures and on broken files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsnmt.io import DataError
from lsnmt.tasks.data import NER_LABELS, read_tydiqa, read_wikiann

ROOT = Path(__file__).resolve().parents[2]
FIX = ROOT / "embedded" / "tasks"


def test_wikiann_fixture_reads_as_sentences() -> None:
    sents, untagged = read_wikiann(FIX / "wikiann" / "zh" / "train")
    assert len(sents) == 24 and untagged == 0
    assert all(len(s.words) == len(s.tags) and set(s.tags) <= set(NER_LABELS) for s in sents)
    assert all(len(w) == 1 for s in sents for w in s.words)  # Chinese: one character per token


def test_wikiann_prefix_cut_at_the_first_colon_and_missing_tags(tmp_path: Path) -> None:
    path = tmp_path / "train"
    path.write_text("en:http://x.org\tO\nen:Paris\tB-LOC\n\nen:untagged\n", encoding="utf-8")
    sents, untagged = read_wikiann(path)
    assert [s.words for s in sents] == [("http://x.org", "Paris"), ("untagged",)]
    assert sents[1].tags == ("O",) and untagged == 1


@pytest.mark.parametrize(("text", "match"), [("en:Paris\tB-CITY\n", r"train:1: unknown tag 'B-CITY'"),
                                               ("\nParis\tO\n", r"train:2: expected '<lang>:<token>")])
def test_wikiann_bad_lines_name_file_and_line(tmp_path: Path, text: str, match: str) -> None:
    path = tmp_path / "train"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError, match=match):
        read_wikiann(path)


def test_tydiqa_fixture_split_by_language_prefix() -> None:
    got = read_tydiqa(FIX / "tydiqa" / "tydiqa-goldp-v1.1-train.json", ("bn", "ko"))
    assert set(got) == {"bn", "ko"} and len(got["bn"]) == len(got["ko"]) == 12
    q = got["ko"][0]
    text, start = q.answers[0]
    assert q.qid.startswith("korean-") and q.context[start:start + len(text)] == text


def test_tydiqa_errors_name_the_example(tmp_path: Path) -> None:
    bad = {"data": [{"paragraphs": [{"context": "short", "qas": [
        {"id": "english-1-0", "question": "q?", "answers": [{"text": "short text", "answer_start": 0}]}]}]}]}
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(DataError, match=r"paragraphs\[0\]\.qas\[0\]\.answers\[0\] \(id english-1-0\)"):
        read_tydiqa(path, ("en",))
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(DataError, match="not a UTF-8 JSON file"):
        read_tydiqa(path, ("en",))
