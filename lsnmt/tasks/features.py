"""Sub-word features of the two tasks (``task_prep``) and the inverse maps back to words and answers.

NER (as XTREME's ``run_tag``): each word is tokenized on its own (``▁`` prefix), the sentence becomes
``<s> pieces </s>`` cut to ``max_length``, and only the first piece of a word carries its label (``-100``,
ignored, elsewhere). A prediction is the label of a word's first piece; words past the cut are predicted
``O`` (and still scored against their gold tags).

QA (as BERT/XTREME's ``run_squad``): ``<s> question </s></s> window </s>``, the question cut to
``max_query_length`` pieces, the context split into windows of the remaining budget whose starts are
``doc_stride`` pieces apart. A training window's target is the first and last piece overlapping the (first)
gold answer, or ``<s>`` (position 0) when the answer is not wholly inside it. Context pieces keep their
character offsets, so a predicted span is the context text between them (:func:`best_span`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tokenizers import Tokenizer

from lsnmt.io import DataError
from lsnmt.tasks.data import NER_LABELS, Question, Sentence
from lsnmt.tasks.tokenizer import CLS, SEP

if TYPE_CHECKING:  # the prediction helpers take tensors; task_prep, which builds features only, starts without torch
    import torch

IGNORE = -100
"""Label of positions that carry no loss (special tokens, non-first pieces of a word)."""
LABEL_ID = {t: i for i, t in enumerate(NER_LABELS)}


def ner_feature(tok: Tokenizer, sent: Sentence, max_length: int) -> dict[str, Any]:
    """``ids`` (with ``<s>``/``</s>``), ``labels`` (one per id), ``first`` (each word's first piece, -1 if
    cut off) and the gold ``tags`` of one sentence."""
    enc = tok.encode(list(sent.words), is_pretokenized=True, add_special_tokens=False)
    keep = max_length - 2
    ids = [CLS, *enc.ids[:keep], SEP]
    labels = [IGNORE] * len(ids)
    first = [-1] * len(sent.words)
    for pos, w in enumerate(enc.word_ids[:keep], start=1):
        if w is not None and first[w] == -1:
            first[w] = pos
            labels[pos] = LABEL_ID[sent.tags[w]]
    return {"ids": ids, "labels": labels, "first": first, "tags": list(sent.tags)}


def ner_tags(logits: torch.Tensor, first: list[int]) -> list[str]:
    """Predicted tag of every word from one sentence's ``(T, labels)`` logits (``O`` past the cut)."""
    best = logits.argmax(-1).tolist()
    return [NER_LABELS[best[p]] if p >= 0 else "O" for p in first]


def _answer_span(offsets: list[tuple[int, int]], start: int, end: int) -> tuple[int, int] | None:
    """First and last context piece overlapping characters ``[start, end)``."""
    hit = [i for i, (a, b) in enumerate(offsets) if a < end and b > start]
    return (hit[0], hit[-1]) if hit else None


def qa_features(tok: Tokenizer, q: Question, *, max_length: int, doc_stride: int, max_query_length: int,
                train: bool) -> list[dict[str, Any]]:
    """The windows of one question: ``ids``, ``start``/``end`` targets (training) or the context pieces'
    character ``offsets`` (``None`` on question and special positions; prediction)."""
    q_ids = tok.encode(q.question, add_special_tokens=False).ids[:max_query_length]
    ctx = tok.encode(q.context, add_special_tokens=False)
    c_ids, c_off = ctx.ids, [tuple(o) for o in ctx.offsets]
    budget = max_length - len(q_ids) - 4
    if budget < 1:
        raise DataError(f"question {q.qid}: max_length {max_length} leaves no room for the context "
                        f"after {len(q_ids)} question pieces (lower max_query_length)")
    span = None
    if train:
        text, char = q.answers[0]
        span = _answer_span(c_off, char, char + len(text))
    starts = [0]
    while starts[-1] + budget < len(c_ids):
        starts.append(starts[-1] + doc_stride)
    head = [CLS, *q_ids, SEP, SEP]
    out = []
    for s in starts:
        piece = slice(s, s + budget)
        ids = [*head, *c_ids[piece], SEP]
        feat: dict[str, Any] = {"qid": q.qid, "ids": ids}
        if train:
            inside = span is not None and s <= span[0] and span[1] < s + budget
            feat["start"] = span[0] - s + len(head) if inside else 0
            feat["end"] = span[1] - s + len(head) if inside else 0
        else:
            feat["offsets"] = [None] * len(head) + [list(o) for o in c_off[piece]] + [None]
        out.append(feat)
    return out


@dataclass(frozen=True)
class Span:
    score: float
    start: int
    end: int
    """Character offsets of the answer in the context, ``[start, end)``."""


def best_span(start_logits: torch.Tensor, end_logits: torch.Tensor, offsets: list[list[int] | None], *,
              n_best: int, max_answer_length: int) -> Span | None:
    """Highest ``start + end`` logit pair over context pieces with ``start <= end < start + max_answer_length``,
    among the ``n_best`` best starts and ends of one window (``None``: no valid pair)."""
    import torch

    ctx = torch.tensor([o is not None for o in offsets])
    if not bool(ctx.any()):
        return None
    neg = torch.finfo(start_logits.dtype).min
    s_log, e_log = start_logits.masked_fill(~ctx, neg), end_logits.masked_fill(~ctx, neg)
    k = min(n_best, int(ctx.sum()))
    best: Span | None = None
    for s in s_log.topk(k).indices.tolist():
        for e in e_log.topk(k).indices.tolist():
            if e < s or e - s + 1 > max_answer_length:
                continue
            score = float(s_log[s] + e_log[e])
            if best is None or score > best.score:
                a, b = offsets[s], offsets[e]
                assert a is not None and b is not None
                best = Span(score, a[0], b[1])
    return best
