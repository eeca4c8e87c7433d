"""The two papers' metrics, written out so that they can be tested on hand-computed cases.

**NER span F1** (seqeval's default ``f1_score``, i.e. CoNLL-2000's ``conlleval``): entities are maximal
chunks ``(type, first, last)`` read from IOB / IOB2 / IOBES tags the lenient conlleval way (an ``I-X`` that
does not continue an ``X`` chunk opens one; a change of type closes a chunk); sentences are concatenated with
``O`` between them; micro precision = correct / predicted, recall = correct / gold, F1 = 2PR / (P + R)
(0 when nothing is correct), an entity being correct only with the same type and boundaries.

**QA F1 / EM** (the official SQuAD v1.1 ``evaluate-v1.1.py``, which XTREME applies to TyDiQA-GoldP): answers
are normalised (lower case, ASCII punctuation removed, English articles a/an/the removed, whitespace
collapsed), F1 is the bag-of-tokens overlap of prediction and gold split on whitespace, EM string equality;
each question takes its best gold answer; the scores are means over questions, in percent.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Mapping, Sequence

Chunk = tuple[str, int, int]


def _split(tag: str) -> tuple[str, str]:
    """``B-PER`` -> (``B``, ``PER``); ``O`` -> (``O``, ``""``)."""
    if tag in ("O", ""):
        return "O", ""
    prefix, _, kind = tag.partition("-")
    return (prefix, kind) if kind else ("I", prefix)


def _ends(prev: str, prev_kind: str, cur: str, kind: str) -> bool:
    """Does the chunk open at the previous token end before the current one?"""
    if prev == "O":
        return False
    if prev in ("E", "S") or cur in ("B", "S", "O"):
        return True
    return prev_kind != kind


def _starts(prev: str, prev_kind: str, cur: str, kind: str) -> bool:
    """Does a chunk start at the current token?"""
    if cur == "O":
        return False
    if cur in ("B", "S") or prev in ("O", "E", "S"):
        return True
    return prev_kind != kind


def chunks(tags: Sequence[str]) -> list[Chunk]:
    """Entities ``(type, first, last)`` of one tag sequence (indices inclusive)."""
    out: list[Chunk] = []
    prev, prev_kind, begin = "O", "", 0
    for i, tag in enumerate([*tags, "O"]):
        cur, kind = _split(tag)
        if _ends(prev, prev_kind, cur, kind):
            out.append((prev_kind, begin, i - 1))
        if _starts(prev, prev_kind, cur, kind):
            begin = i
        prev, prev_kind = cur, kind
    return out


def span_f1(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> float:
    """Micro span F1 (%) over sentences (seqeval ``f1_score``)."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred)} predicted")
    n_gold = n_pred = correct = 0
    for i, (g, p) in enumerate(zip(gold, pred, strict=True)):
        if len(g) != len(p):
            raise ValueError(f"sentence {i}: {len(g)} gold tags but {len(p)} predicted")
        gc, pc = set(chunks(g)), set(chunks(p))
        n_gold, n_pred, correct = n_gold + len(gc), n_pred + len(pc), correct + len(gc & pc)
    if correct == 0:
        return 0.0
    precision, recall = correct / n_pred, correct / n_gold
    return 100.0 * 2 * precision * recall / (precision + recall)


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation)


def normalize_answer(s: str) -> str:
    """SQuAD v1.1: lower case, drop ASCII punctuation, drop a/an/the, collapse whitespace."""
    s = "".join(ch for ch in s.lower() if ch not in _PUNCT)
    return " ".join(_ARTICLES.sub(" ", s).split())


def token_f1(prediction: str, gold: str) -> float:
    """Bag-of-tokens F1 (0-1) of two answers after normalisation."""
    p, g = normalize_answer(prediction).split(), normalize_answer(gold).split()
    common = sum((Counter(p) & Counter(g)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def squad_scores(gold: Mapping[str, Sequence[str]], pred: Mapping[str, str]) -> dict[str, float]:
    """``{"f1": …, "exact_match": …}`` in percent over the questions of ``gold``; a question without a
    prediction scores 0 (as the official script, which warns about it)."""
    if not gold:
        raise ValueError("no gold questions")
    f1 = em = 0.0
    for qid, answers in gold.items():
        guess = pred.get(qid)
        if guess is None:
            continue
        f1 += max(token_f1(guess, a) for a in answers)
        em += max(float(normalize_answer(guess) == normalize_answer(a)) for a in answers)
    return {"f1": 100.0 * f1 / len(gold), "exact_match": 100.0 * em / len(gold)}
