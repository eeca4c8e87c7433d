"""Issue 21: the decoder (greedy path for beam 1, cross-attention per sentence, finished sentences leaving the
batch) finds the same hypotheses as the search it replaced (``tests/models/reference_search.py``), token for
token, for every method kind, mixed-length and mixed-direction batches, with length penalties."""

from __future__ import annotations

import math
from typing import Any

import pytest
import torch
from torch import nn

from lsnmt.decode.beam import beam_search
from lsnmt.decode.common import Hypothesis
from lsnmt.decode.greedy import greedy_search
from models.build import build_transformer
from models.config.adapter import AdapterConfig
from models.config.clm import CLMConfig
from models.config.clsr import CLSRConfig
from models.config.deep import DeepConfig
from models.config.fd import FDConfig
from models.config.lms import LMSConfig, LMSFDConfig
from models.config.lsl import LSLConfig
from models.config.switch import SwitchConfig
from models.lang import LangContext
from models.transformer import Transformer
from tests.models.helpers import EOS, TOY_LS, random_batch, tiny, tiny_config
from tests.models.reference_search import reference_beam, reference_greedy

VOCAB = 13
METHODS: dict[str, tuple[str | None, Any, dict[str, Any]]] = {
    "naive": (None, None, {}),
    "naive-per-target": (None, None, {"decoder": "per-target"}),
    "lms-cross": ("lms", LMSConfig(rank=4, where="both", attention=("self", "cross")), {}),
    "lms-language": ("lms", LMSConfig(rank=4, synthesis="language", where="attention", attention=("cross",)), {}),
    "lms_fd-share": ("lms_fd", LMSFDConfig(rank=4, where="both", attention=("cross",)), {}),
    "lms_fd-ls": ("lms_fd", LMSFDConfig(rank=4, route="ls"), {}),
    "fd-ls": ("fd", FDConfig(route="ls"), {}),
    # no token dropped at inference: with fairseq's eval capacity, what an expert drops depends on the rows that
    # share a call, which the two searches arrange differently (finished sentences leave at other steps)
    "switch": ("switch", SwitchConfig(experts=3, every=1, eval_capacity_fraction=1.0), {}),
    "clsr": ("clsr", CLSRConfig(gate_hidden=8), {}),
    "clm": ("clm", CLMConfig(features=3, encoder="mclm", decoder="mclm"), {}),
    "clm-ls": ("clm", CLMConfig(encoder="ls", decoder="ls", key="tgt"), {}),
    "adapter": ("adapter", AdapterConfig(bottleneck=4, encoder="src", decoder="tgt"), {"decoder": "per-target"}),
    "deep": ("deep", DeepConfig(encoder_layers=3, decoder_layers=3), {}),
    "lsl": ("lsl", LSLConfig(src=(1,), tgt=(2,), decoder="per-target"), {}),
}


def method_model(name: str, seed: int = 0) -> Transformer:
    """A tiny model of method ``name``, every parameter perturbed (zero-initialised LS factors matter too)."""
    if name == "toy":
        return tiny(vocab=VOCAB, decoder="per-target", factories=TOY_LS, seed=seed)
    kind, cfg, overrides = METHODS[name]
    torch.manual_seed(seed)
    model = build_transformer(tiny_config(**overrides), vocab_size=VOCAB, num_languages=3, method=kind, method_cfg=cfg)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.2 * torch.randn_like(p))
    return model.eval()


def mixed_langs() -> LangContext:
    return LangContext(torch.tensor([0, 1, 2, 0, 2]), torch.tensor([1, 0, 0, 2, 1]))


def same(new: list[list[Hypothesis]], ref: list[list[Hypothesis]]) -> None:
    assert [[h.tokens for h in hyps] for hyps in new] == [[h.tokens for h in hyps] for hyps in ref]
    for a, b in zip(new, ref, strict=True):
        for x, y in zip(a, b, strict=True):
            assert math.isclose(x.score, y.score, rel_tol=1e-5, abs_tol=1e-5)


CASES = [("greedy", 1, 1.0), ("beam5", 5, 1.0), ("beam5-lenpen", 5, 0.6), ("beam3-lenpen", 3, 1.5)]


@pytest.mark.parametrize("name", ["toy", *METHODS])
@pytest.mark.parametrize("case,beam,lenpen", CASES, ids=[c[0] for c in CASES])
def test_same_hypotheses_as_the_old_search(name: str, case: str, beam: int, lenpen: float) -> None:
    model = method_model(name, seed=len(name))
    src, _ = random_batch(5, 7, 1, VOCAB, seed=3)  # sources of 2-7 tokens: maximum lengths 5-7
    kw: dict[str, Any] = dict(lenpen=lenpen, max_len_a=0.5, max_len_b=4, min_len=2)
    for langs in (mixed_langs(), LangContext.single(1, 2, 5)):
        new = beam_search(model, src, langs, beam=beam, nbest=beam, **kw)
        ref = reference_beam(model, src, langs, beam=beam, nbest=beam, **kw)
        same(new.nbest, ref)
        assert new.tokens == [h[0].tokens for h in ref]


@pytest.mark.parametrize("check_every", [1, 2, 5])
def test_checks_every_few_steps_give_the_same_hypotheses(check_every: int) -> None:
    """Finished sentences decoded along until the next check change nothing."""
    model = method_model("lms-cross", seed=2)
    src, _ = random_batch(6, 7, 1, VOCAB, seed=4)
    langs = LangContext(torch.tensor([0, 1, 2, 0, 2, 1]), torch.tensor([1, 0, 0, 2, 1, 2]))
    kw: dict[str, Any] = dict(max_len_a=1.0, max_len_b=2, check_every=check_every)
    beam = beam_search(model, src, langs, beam=4, nbest=4, **kw)
    same(beam.nbest, reference_beam(model, src, langs, beam=4, nbest=4, max_len_a=1.0, max_len_b=2))
    greedy = greedy_search(model, src, langs, **kw)
    same(greedy.nbest, reference_greedy(model, src, langs, max_len_a=1.0, max_len_b=2))


def test_greedy_equals_the_old_greedy_with_start_tags() -> None:
    model = method_model("naive-per-target", seed=5)
    src, _ = random_batch(5, 6, 1, VOCAB, seed=6)
    langs = mixed_langs()
    start = torch.tensor([10, 11, 12]).index_select(0, langs.tgt)
    new = greedy_search(model, src, langs, max_len_b=6, lenpen=0.8, start_tokens=start)
    same(new.nbest, reference_greedy(model, src, langs, max_len_b=6, lenpen=0.8, start_tokens=start))


def test_sentences_that_end_early_leave_the_batch() -> None:
    """EOS made likely: sentences end at different steps, and the batch shrinks as they do."""
    model = method_model("naive", seed=7)
    with torch.no_grad():
        model.decoder.output_projection.weight[EOS].mul_(3.0)
    src, _ = random_batch(5, 7, 1, VOCAB, seed=8)
    langs = LangContext.single(0, 1, 5)
    sizes: list[int] = []
    layer = model.decoder.stacks[0].layers[0]
    handle = layer.register_forward_pre_hook(lambda m, args: sizes.append(args[0].size(0)))
    try:
        result = beam_search(model, src, langs, beam=2, nbest=2, max_len_b=8)
    finally:
        handle.remove()
    same(result.nbest, reference_beam(model, src, langs, beam=2, nbest=2, max_len_b=8))
    assert len({len(t) for t in result.tokens}) > 1, "the sentences should end at different lengths"
    assert sizes[0] == 10 and sizes[-1] < sizes[0] and sizes == sorted(sizes, reverse=True)


def test_empty_batch() -> None:
    model = method_model("naive")
    src = torch.zeros((0, 4), dtype=torch.long)
    for beam in (1, 4):
        out = beam_search(model, src, LangContext.single(0, 1, 0), beam=beam)
        assert out.tokens == [] and out.scores.numel() == 0


def test_cross_attention_projected_once_per_sentence() -> None:
    """The encoder-attention keys/values are computed for the B sentences, not the B * beam rows."""
    model = method_model("naive", seed=9)
    src, _ = random_batch(3, 5, 1, VOCAB, seed=10)
    rows: list[int] = []
    k_proj: nn.Module = model.decoder.stacks[0].layers[0].cross_attn.kv_proj
    handle = k_proj.register_forward_hook(lambda m, args, out: rows.append(args[0].size(0)))
    try:
        beam_search(model, src, LangContext.single(0, 1, 3), beam=4, max_len_b=5, min_len=5)
    finally:
        handle.remove()
    assert rows == [3]
