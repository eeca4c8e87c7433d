import itertools

import pytest
import torch
import torch.nn.functional as F

from lsnmt.decode.beam import beam_search
from lsnmt.decode.common import tag_start_tokens
from lsnmt.decode.greedy import greedy_search
from models.lang import LangContext
from models.transformer import Transformer
from tests.models.helpers import EOS, PAD, TOY_LS, random_batch, tiny

VOCAB = 13


def mixed_langs() -> LangContext:
    return LangContext(torch.tensor([0, 1, 2, 0]), torch.tensor([1, 0, 0, 2]))


@torch.no_grad()
def naive_greedy(model: Transformer, src: torch.Tensor, langs: LangContext, max_len: int,
                 start: torch.Tensor | None = None) -> list[list[int]]:
    """Arg-max decoding by full recomputation of the prefix at every step (no cache); min_len 1."""
    out = []
    for b in range(src.size(0)):
        lb = langs.index_select(torch.tensor([b]))
        prefix = [EOS if start is None else int(start[b])]
        for step in range(max_len + 1):
            lp = F.log_softmax(model(src[b : b + 1], torch.tensor([prefix]), lb)[0, -1], -1)
            lp[PAD] = -torch.inf
            if step == 0:
                lp[EOS] = -torch.inf
            tok = EOS if step == max_len else int(lp.argmax())
            if tok == EOS:
                break
            prefix.append(tok)
        out.append(prefix[1:])
    return out


@pytest.mark.parametrize("decoder", ["shared", "per-target"])
def test_beam1_equals_greedy_equals_reference(decoder: str) -> None:
    model = tiny(vocab=VOCAB, decoder=decoder, factories=TOY_LS, seed=3)
    src, _ = random_batch(4, 6, 1, VOCAB, seed=5)
    langs = mixed_langs()
    b1 = beam_search(model, src, langs, beam=1, max_len_b=7)
    g = greedy_search(model, src, langs, max_len_b=7)
    assert b1.tokens == g.tokens
    torch.testing.assert_close(b1.scores, g.scores)
    assert g.tokens == naive_greedy(model, src, langs, max_len=7)


def test_start_tokens_from_target_language_tags() -> None:
    model = tiny(vocab=VOCAB, decoder="per-target", seed=4)
    src, _ = random_batch(4, 6, 1, VOCAB, seed=6)
    langs = mixed_langs()
    start = tag_start_tokens(langs, [10, 11, 12])  # tag id of languages 0, 1, 2
    assert start.tolist() == [11, 10, 10, 12]
    g = greedy_search(model, src, langs, max_len_b=6, start_tokens=start)
    assert g.tokens == naive_greedy(model, src, langs, max_len=6, start=start)
    assert beam_search(model, src, langs, beam=1, max_len_b=6, start_tokens=start).tokens == g.tokens


@torch.no_grad()
def exhaustive_best(model: Transformer, src: torch.Tensor, langs: LangContext, max_len: int,
                    lenpen: float) -> tuple[list[int], float]:
    """Score every sequence of 1..max_len non-special tokens + EOS; return the best length-normalised one."""
    words = [t for t in range(model.decoder.output_projection.weight.size(0)) if t not in (PAD, EOS)]
    seqs = [list(s) for n in range(1, max_len + 1) for s in itertools.product(words, repeat=n)]
    prev = torch.full((len(seqs), max_len + 1), PAD)
    for i, s in enumerate(seqs):
        prev[i, : len(s) + 1] = torch.tensor([EOS, *s])
    lp = F.log_softmax(model(src.expand(len(seqs), -1), prev, langs.index_select(torch.zeros(len(seqs)).long())), -1)
    best, best_score = [], -float("inf")
    for i, s in enumerate(seqs):
        total = sum(float(lp[i, t, tok]) for t, tok in enumerate([*s, EOS]))
        score = total / (len(s) + 1) ** lenpen
        if score > best_score:
            best, best_score = s, score
    return best, best_score


@pytest.mark.parametrize("lenpen", [0.0, 1.0, 2.0])
def test_large_beam_is_exhaustive(lenpen: float) -> None:
    vocab, max_len = 6, 4  # words {0, 3, 4, 5}: 4 + 16 + 64 + 256 = 340 hypotheses
    model = tiny(vocab=vocab, seed=7)
    with torch.no_grad():  # sharper distributions than the init gives
        model.decoder.output_projection.weight.mul_(4)
    src = torch.tensor([[3, 4, 5, EOS], [5, 5, EOS, PAD]])
    langs = LangContext.single(0, 1, 2)
    result = beam_search(model, src, langs, beam=400, max_len_b=max_len, lenpen=lenpen)
    for b in range(2):
        tokens, score = exhaustive_best(model, src[b : b + 1], langs.index_select(torch.tensor([b])), max_len, lenpen)
        assert result.tokens[b] == tokens
        assert abs(float(result.scores[b]) - score) < 1e-4


def test_reordering_batch_reorders_hypotheses() -> None:
    model = tiny(vocab=VOCAB, decoder="per-target", factories=TOY_LS, seed=8)
    src, _ = random_batch(4, 6, 1, VOCAB, seed=9)
    langs = mixed_langs()
    perm = torch.tensor([2, 0, 3, 1])
    a = beam_search(model, src, langs, beam=4, max_len_b=6)
    b = beam_search(model, src[perm], langs.index_select(perm), beam=4, max_len_b=6)
    assert b.tokens == [a.tokens[i] for i in perm.tolist()]
    torch.testing.assert_close(b.scores, a.scores[perm])


def test_mixed_batch_beam_equals_each_direction() -> None:
    model = tiny(vocab=VOCAB, decoder="per-target", factories=TOY_LS, seed=10)
    src, _ = random_batch(4, 6, 1, VOCAB, seed=11)
    langs = mixed_langs()
    mixed = beam_search(model, src, langs, beam=3, max_len_b=6, nbest=3)
    for b in range(4):
        alone = beam_search(model, src[b : b + 1], LangContext.single(int(langs.src[b]), int(langs.tgt[b]), 1),
                            beam=3, max_len_b=6, nbest=3)
        assert alone.tokens[0] == mixed.tokens[b]
        assert [h.tokens for h in alone.nbest[0]] == [h.tokens for h in mixed.nbest[b]]


def test_length_limits() -> None:
    model = tiny(vocab=VOCAB, seed=12)
    src, _ = random_batch(4, 6, 1, VOCAB, seed=13)
    langs = LangContext.single(0, 1, 4)
    src_len = src.ne(PAD).sum(1)
    r = beam_search(model, src, langs, beam=3, max_len_a=0.5, max_len_b=1, min_len=2)
    for hyp, n in zip(r.tokens, src_len.tolist(), strict=True):
        assert 2 <= len(hyp) <= int(0.5 * n + 1)
        assert EOS not in hyp and PAD not in hyp


def test_hypotheses_at_the_length_limit_are_counted() -> None:
    """translate warns when hypotheses stop at max_len_a * |x| + max_len_b (issue 18: none may be cut)."""
    from lsnmt.decode.translate import at_limit

    assert at_limit([[5, 6], [5, 6, 7], []], [3, 3, 1]) == 1
