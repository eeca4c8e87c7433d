"""NER span F1 (seqeval / conlleval semantics) and SQuAD v1.1 F1 / EM on cases computed by hand."""

from __future__ import annotations

import pytest

from lsnmt.tasks.metrics import chunks, normalize_answer, span_f1, squad_scores, token_f1


def test_chunks_iob2() -> None:
    tags = ["B-PER", "I-PER", "O", "B-LOC", "B-LOC", "I-LOC", "O", "B-ORG"]
    assert chunks(tags) == [("PER", 0, 1), ("LOC", 3, 3), ("LOC", 4, 5), ("ORG", 7, 7)]


def test_chunks_lenient_like_conlleval() -> None:
    # an I- without a B- opens a chunk; a type change inside I- splits it; B after I closes it
    assert chunks(["I-PER", "I-PER", "O"]) == [("PER", 0, 1)]
    assert chunks(["B-PER", "I-LOC", "I-LOC"]) == [("PER", 0, 0), ("LOC", 1, 2)]
    assert chunks(["O", "I-ORG", "B-ORG", "I-ORG"]) == [("ORG", 1, 1), ("ORG", 2, 3)]
    assert chunks(["O", "O"]) == []


def test_chunks_iobes() -> None:
    assert chunks(["S-PER", "B-LOC", "E-LOC", "S-LOC"]) == [("PER", 0, 0), ("LOC", 1, 2), ("LOC", 3, 3)]


def test_span_f1_seqeval_readme_example() -> None:
    # seqeval's README: precision 0.50, recall 0.50, f1 0.50
    gold = [["O", "O", "O", "B-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    pred = [["O", "O", "B-MISC", "I-MISC", "I-MISC", "I-MISC", "O"], ["B-PER", "I-PER", "O"]]
    assert span_f1(gold, pred) == pytest.approx(50.0)


def test_span_f1_counts_boundaries_and_types() -> None:
    gold = [["B-PER", "I-PER", "O", "B-LOC"], ["B-ORG", "O"]]
    pred = [["B-PER", "O", "O", "B-LOC"], ["B-LOC", "O"]]  # PER boundary wrong, LOC right, ORG typed LOC
    # correct 1, predicted 3, gold 3 -> P = R = 1/3 -> F1 = 33.33
    assert span_f1(gold, pred) == pytest.approx(100 / 3)
    assert span_f1(gold, gold) == pytest.approx(100.0)
    assert span_f1([["O"]], [["O"]]) == 0.0  # nothing to find: seqeval returns 0 too
    with pytest.raises(ValueError, match="sentence 0"):
        span_f1([["O", "O"]], [["O"]])


def test_squad_normalisation_and_token_f1() -> None:
    assert normalize_answer("The  Danube, river!") == "danube river"
    assert normalize_answer("an Apple a day") == "apple day"
    assert token_f1("the Danube river", "Danube") == pytest.approx(2 * (1 / 2) * 1 / (1 / 2 + 1))  # P 1/2, R 1
    assert token_f1("Paris", "London") == 0.0


def test_squad_scores_take_the_best_gold_and_score_missing_as_zero() -> None:
    gold = {"q1": ["Paris", "the city of Paris"], "q2": ["Nile"], "q3": ["Seine"]}
    pred = {"q1": "city of Paris", "q2": "the Nile river"}  # q3 unanswered
    # q1: best gold "the city of Paris" -> normalised "city of paris" = exact; q2: P 1/2 R 1 -> 2/3; q3: 0
    got = squad_scores(gold, pred)
    assert got["f1"] == pytest.approx(100 * (1 + 2 / 3 + 0) / 3)
    assert got["exact_match"] == pytest.approx(100 / 3)
