"""Tiny models and a toy language-specific module shared by the model tests."""

from __future__ import annotations

from collections.abc import Iterator

import torch
from torch import Tensor, nn

from lsnmt.data.corpus import Sample
from models.build import build_transformer
from models.config.model import ModelConfig
from models.factories import Factories, LayerSpec
from models.lang import LangContext
from models.layers import FeedForward
from models.transformer import Transformer

PAD, EOS = 1, 2
METHOD_OVERRIDES: dict[str, dict[str, object]] = {
    "lsl": {"src": (1,), "tgt": (2,)},  # the defaults are the dense model: one layer of each index language
    "deep": {"encoder_layers": 3, "decoder_layers": 3},  # the defaults are CLM's 26 + 26 layers
}
"""Settings for the 2+2-layer test model where a kind's defaults do not fit it (:func:`method_model`)."""


def tiny_config(**overrides: object) -> ModelConfig:
    base: dict[str, object] = dict(arch="transformer_base", embed_dim=16, ffn_dim=32, heads=2, encoder_layers=2,
                                   decoder_layers=2, dropout=0.0)
    base.update(overrides)
    return ModelConfig(**base)  # type: ignore[arg-type]


def tiny(*, vocab: int = 13, num_languages: int = 3, seed: int = 0, factories: Factories | None = None,
         **overrides: object) -> Transformer:
    """d=16, 2+2 layers, 2 heads, in eval mode; LayerNorm affine params perturbed so they matter."""
    torch.manual_seed(seed)
    model = build_transformer(tiny_config(**overrides), vocab_size=vocab, num_languages=num_languages,
                              factories=factories)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.add_(0.1 * torch.randn_like(m.weight))
                m.bias.add_(0.1 * torch.randn_like(m.bias))
    return model.eval()


class ToyLSFFN(nn.Module):
    """A language-specific FFN for seam tests: ``FFN(x) + b[tgt] + c[src]``."""

    def __init__(self, spec: LayerSpec) -> None:
        super().__init__()
        self.ffn = FeedForward(spec.embed_dim, spec.ffn_dim)
        self.tgt_bias = nn.Parameter(torch.randn(spec.num_languages, spec.embed_dim))
        self.src_bias = nn.Parameter(torch.randn(spec.num_languages, spec.embed_dim))
        self._last: Tensor | None = None

    def forward(self, x: Tensor, langs: LangContext) -> Tensor:
        b = self.tgt_bias.index_select(0, langs.tgt) + self.src_bias.index_select(0, langs.src)  # (B, D)
        self._last = b.pow(2).mean()
        return self.ffn(x, langs) + b.unsqueeze(1)

    def aux_loss(self) -> Tensor | None:
        return self._last

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        yield from self.ffn.parameters()
        yield self.tgt_bias[tgt]
        yield self.src_bias[src]


TOY_LS = Factories(ffn=ToyLSFFN)


def random_batch(batch: int, src_len: int, tgt_len: int, vocab: int, seed: int = 1) -> tuple[Tensor, Tensor]:
    """Right-padded sources of varying length (>= 2 tokens, EOS-terminated) and unpadded decoder inputs."""
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(4, vocab, (batch, src_len), generator=g)
    lengths = torch.randint(2, src_len + 1, (batch,), generator=g)
    for i, n in enumerate(lengths.tolist()):
        src[i, n - 1] = EOS
        src[i, n:] = PAD
    prev = torch.randint(4, vocab, (batch, tgt_len), generator=g)
    prev[:, 0] = EOS
    return src, prev


def assert_mixed_equals_single(model: nn.Module, vocab: int = 13) -> None:
    """A batch mixing directions gives, row by row, what one-direction batches give."""
    src, prev = random_batch(4, 5, 4, vocab)
    langs = LangContext(torch.tensor([0, 1, 0, 2]), torch.tensor([1, 0, 2, 0]))
    mixed = model(src, prev, langs)
    for i in range(4):
        one = model(src[i:i + 1], prev[i:i + 1], LangContext.single(int(langs.src[i]), int(langs.tgt[i]), 1))
        torch.testing.assert_close(mixed[i:i + 1], one, atol=1e-5, rtol=1e-5)


def method_model(kind: str | None, decoder: str = "shared", vocab: int = 13, num_languages: int = 3,
                 **cfg: object) -> Transformer:
    """The tiny model (train mode) of method kind ``kind`` (``None``: naive) with its default config, updated by
    :data:`METHOD_OVERRIDES` and ``cfg``: any kind of ``models.config.kinds.KINDS``, a new one included."""
    from models.config.kinds import KINDS

    method_cfg = None if kind is None else KINDS[kind].config(**{**METHOD_OVERRIDES.get(kind, {}), **cfg})
    torch.manual_seed(0)
    return build_transformer(tiny_config(decoder=decoder), vocab_size=vocab, num_languages=num_languages,
                             method=kind, method_cfg=method_cfg)


def collated(ids: tuple[list[int], list[int]], vocab: int = 13) -> Sample:
    """A batch as ``lsnmt.data.corpus.collate`` builds it for languages ``ids`` (source, target per row):
    padded sources and targets, the languages known on the host."""
    n = len(ids[0])
    src, prev = random_batch(n, 6, 5, vocab)
    target = torch.cat([prev[:, 1:], torch.full((n, 1), EOS)], 1)
    target[1, 3:], prev[1, 4:] = PAD, PAD  # a shorter target
    return Sample(src, prev, target, LangContext.from_ids(*ids), int(target.ne(PAD).sum()))
