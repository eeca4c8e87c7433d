"""Sub-word features: first-piece NER labels, QA windows and their targets, span decoding back to text."""

from __future__ import annotations

import torch

from lsnmt.tasks.data import Question, Sentence
from lsnmt.tasks.features import IGNORE, LABEL_ID, best_span, ner_feature, ner_tags, qa_features
from lsnmt.tasks.tokenizer import CLS, SEP, check_specials, train_tokenizer

TEXTS = ["Maria Silva was born in Paris .", "Budapest is the capital of Hungary. The Danube flows through it.",
         "Which river flows through Budapest?"] * 4


def _tok():
    return train_tokenizer(TEXTS, 60)


def test_trained_tokenizer_has_xlmr_special_ids_and_is_deterministic() -> None:
    tok = _tok()
    check_specials(tok, "trained")
    assert tok.to_str() == _tok().to_str()


def test_ner_first_piece_carries_the_label_and_cut_words_are_o() -> None:
    tok = _tok()
    sent = Sentence(("Maria", "Silva", "was", "born", "in", "Paris", "."),
                    ("B-PER", "I-PER", "O", "O", "O", "B-LOC", "O"))
    f = ner_feature(tok, sent, max_length=64)
    assert f["ids"][0] == CLS and f["ids"][-1] == SEP and len(f["labels"]) == len(f["ids"])
    assert [f["labels"][p] for p in f["first"]] == [LABEL_ID[t] for t in sent.tags]
    assert sum(lab != IGNORE for lab in f["labels"]) == len(sent.words)  # one label per word, nowhere else
    short = ner_feature(tok, sent, max_length=6)  # 4 pieces fit: the last words are cut
    assert len(short["ids"]) == 6 and short["first"][-1] == -1
    logits = torch.zeros(6, 7)
    logits[:, LABEL_ID["B-LOC"]] = 1.0
    assert ner_tags(logits, short["first"])[-1] == "O"  # past the cut: O
    assert ner_tags(logits, short["first"])[0] == "B-LOC"


def test_qa_windows_stride_and_targets_point_at_the_answer() -> None:
    tok = _tok()
    ctx = "Budapest is the capital of Hungary. The Danube flows through it. " * 3
    q = Question("english-1-0", "Which river flows through Budapest?", ctx, (("Danube", ctx.index("Danube")),))
    n_ctx = len(tok.encode(ctx, add_special_tokens=False).ids)
    feats = qa_features(tok, q, max_length=40, doc_stride=10, max_query_length=8, train=True)
    budget = 40 - 8 - 4
    assert len(feats) == 1 + -(-(n_ctx - budget) // 10)  # windows start 0, 10, 20 ... until the end is covered
    assert all(len(f["ids"]) <= 40 and f["ids"][:1] == [CLS] and f["ids"][9:11] == [SEP, SEP] for f in feats)
    inside = [f for f in feats if f["start"] > 0]
    assert inside and any(f["start"] == 0 and f["end"] == 0 for f in feats)  # answer outside -> <s>
    test = qa_features(tok, q, max_length=40, doc_stride=10, max_query_length=8, train=False)
    for f_train, f_test in zip(feats, test, strict=True):
        if f_train["start"]:
            a, b = f_test["offsets"][f_train["start"]][0], f_test["offsets"][f_train["end"]][1]
            assert ctx[a:b].strip() == "Danube"


def test_best_span_respects_context_order_and_length() -> None:
    offsets = [None, None, [0, 5], [6, 8], [9, 14], None]
    start = torch.tensor([9.0, 0.0, 1.0, 3.0, 0.0, 9.0])  # specials score high but are never chosen
    end = torch.tensor([9.0, 0.0, 5.0, 0.0, 4.0, 9.0])
    span = best_span(start, end, offsets, n_best=5, max_answer_length=3)
    assert span is not None and (span.start, span.end) == (6, 14)  # start 3 + end 4 (7.0) beats 2 + 2 (6.0)
    assert span.score == 7.0
    assert best_span(start, end, offsets, n_best=5, max_answer_length=1).end == 5  # only single pieces allowed
    assert best_span(start, end, [None] * 6, n_best=5, max_answer_length=3) is None
