"""Readers of the two datasets in their published formats; bad input raises naming file and line / example.

* WikiANN (Pan et al. 2017) in Rahimi et al.'s (2019) balanced splits, as ``panx_dataset.tar`` ships them:
  per language the files ``train``, ``dev``, ``test``; one token per line, ``<lang>:<token><TAB><tag>``
  (the prefix is cut at the first colon: tokens may contain colons), a blank line after each sentence; IOB2
  tags over PER / ORG / LOC. A line without a tag reads as ``O`` (as the Hugging Face loader does), counted.
* TyDiQA-GoldP (Clark et al. 2020) ``tydiqa-goldp-v1.1-{train,dev}.json``: SQuAD v1.1 JSON
  (``data[].paragraphs[].{context, qas[].{id, question, answers[].{text, answer_start}}}``); the language is
  the prefix of each question id (``bengali--4066…-0``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from lsnmt.io import DataError, iter_lines
from lsnmt.tasks.config import TYDIQA_LANGUAGES

NER_LABELS: tuple[str, ...] = ("O", "B-PER", "I-PER", "B-ORG", "I-ORG", "B-LOC", "I-LOC")
"""WikiANN's label set, in the Hugging Face ``wikiann`` order (the classifier has one output per label)."""
NER_SPLITS = {"train": "train", "valid": "dev", "test": "test"}
"""Our split -> the file name in a WikiANN language folder."""
QA_FILES = {"train": "tydiqa-goldp-v1.1-train.json", "test": "tydiqa-goldp-v1.1-dev.json"}
"""Our split -> the TyDiQA-GoldP file (its dev set is the test set of LMS-FD Table 8, as in XTREME)."""


@dataclass(frozen=True)
class Sentence:
    words: tuple[str, ...]
    tags: tuple[str, ...]


@dataclass(frozen=True)
class Question:
    qid: str
    question: str
    context: str
    answers: tuple[tuple[str, int], ...]
    """``(text, character offset in context)`` of every gold answer."""


def read_wikiann(path: Path) -> tuple[list[Sentence], int]:
    """Sentences of one split file, and how many token lines had no tag (read as ``O``)."""
    sentences: list[Sentence] = []
    words: list[str] = []
    tags: list[str] = []
    untagged = 0
    for lineno, line in enumerate(iter_lines(path), start=1):
        if not line.strip():
            if words:
                sentences.append(Sentence(tuple(words), tuple(tags)))
                words, tags = [], []
            continue
        head, tab, tag = line.partition("\t")
        if ":" not in head:
            raise DataError(f"{path}:{lineno}: expected '<lang>:<token>\\t<tag>', got {line!r}")
        token = head.split(":", 1)[1]
        tag = tag.strip() if tab else "O"
        untagged += not tab
        if tag not in NER_LABELS:
            raise DataError(f"{path}:{lineno}: unknown tag {tag!r} (WikiANN tags: {' '.join(NER_LABELS)})")
        words.append(token)
        tags.append(tag)
    if words:
        sentences.append(Sentence(tuple(words), tuple(tags)))
    if not sentences:
        raise DataError(f"{path}: no sentences")
    return sentences, untagged


def _need(obj: dict, key: str, typ: type, where: str) -> object:
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, typ):
        raise DataError(f"{where}: expected key {key!r} of type {typ.__name__}")
    return value


def read_tydiqa(path: Path, languages: tuple[str, ...]) -> dict[str, list[Question]]:
    """Questions of ``languages`` (ISO codes) in one GoldP file, in file order."""
    try:
        root = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a UTF-8 JSON file ({exc})") from None
    wanted = {TYDIQA_LANGUAGES[c]: c for c in languages}
    out: dict[str, list[Question]] = {c: [] for c in languages}
    for a, article in enumerate(_need(root, "data", list, str(path))):  # type: ignore[arg-type]
        for p, para in enumerate(_need(article, "paragraphs", list, f"{path}: data[{a}]")):  # type: ignore[arg-type]
            where = f"{path}: data[{a}].paragraphs[{p}]"
            context = _need(para, "context", str, where)
            for q, qa in enumerate(_need(para, "qas", list, where)):  # type: ignore[arg-type]
                at = f"{where}.qas[{q}]"
                qid = _need(qa, "id", str, at)
                lang = wanted.get(str(qid).split("-", 1)[0])
                if lang is None:
                    continue
                answers = []
                for i, ans in enumerate(_need(qa, "answers", list, at)):  # type: ignore[arg-type]
                    text = _need(ans, "text", str, f"{at}.answers[{i}]")
                    start = _need(ans, "answer_start", int, f"{at}.answers[{i}]")
                    if not 0 <= start <= len(context) - len(text):  # type: ignore[arg-type, operator]
                        raise DataError(f"{at}.answers[{i}] (id {qid}): answer_start {start} is outside the context")
                    answers.append((text, start))
                if not answers:
                    raise DataError(f"{at} (id {qid}): no answer (GoldP questions all have one)")
                out[lang].append(Question(str(qid), str(_need(qa, "question", str, at)), str(context),
                                          tuple(answers)))  # type: ignore[arg-type]
    return out
