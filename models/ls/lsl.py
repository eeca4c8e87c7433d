"""Language-Specific Transformer Layers (Pires et al. 2023, "LSL") and the layer of their architecture search.

**LSL** (Sec. 3.1, Figure 1b, Listing 1): an encoder layer that is a dictionary of ordinary Transformer
encoder layers, one per language; each sentence goes through the layer of its *source* or of its *target*
language (the layer's index language), so a forward pass uses one layer's worth of parameters whatever the
number of languages (|θeff| stays that of the dense model, Table 1). ``src`` / ``tgt`` list the 1-based
encoder layers indexed by the source / target language, as the paper writes them: LSL-NAS is
``LSL (SRC={3, 4} & TGT={13, 14, 15})``. ``components`` (Table 4): ``layer`` makes the whole layer
language-specific (LSL), ``ffn`` only its feed-forward sublayer (LS-FFN), ``attention`` only its self-attention
(LS-ATTENTION). The residual LayerNorms stay shared in LS-FFN / LS-ATTENTION (the paper does not say;
2 x 512 parameters per sublayer, below Table 4's 1M precision).

**Search** (Sec. 3.2, Eq. 1): every encoder layer ``i`` holds a shared layer and one LSL (``L`` layers, used
both source- and target-indexed) and mixes them with three scalars,

    h_i = w_sh * layer_i(h_{i-1}) + w_src * LSL_i(h_{i-1}, src) + w_tgt * LSL_i(h_{i-1}, tgt),
    (w_sh, w_src, w_tgt) = softmax(a_i),  a_i in R^3 (footnote 2),

so a layer has the parameters of ``L + 1`` layers plus 3 and costs three layers' computation. After training,
layer ``i`` becomes shared / source-indexed / target-indexed by ``argmax`` of its (seed-averaged) weights, and
the selected architecture is trained from scratch (``lsnmt/train/arch_search.py``).

**Dense pre-training** (Sec. 3.3): :func:`dense_init` copies a dense model's weights into every language's
copy of each LSL (and every other weight unchanged).

A sentence is routed whole: a batch that mixes directions goes through every language's copy at once, its rows
tiled by index language (``models/ls/grouped.py``), so a mixed batch gives row by row what one-direction batches
give, with the shapes and the operations of one layer.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from models.config.lsl import CHOICES, Component, Decoder, Index, LSLConfig, LSLSearchConfig  # noqa: F401  (the kind's config, torch-free)
from models.factories import Factories, LayerSpec
from models.lang import LangContext
from models.ls.base import active_parameters
from models.ls.grouped import call_one, fuse, grouped_call, route


class LanguageSpecific(nn.Module):
    """One module per language, chosen per sentence by its source or target language (Figure 1b).

    Stands in for the module it copies (an encoder layer, a feed-forward or an attention sublayer) and is
    called like it: ``forward(x, langs, …)``. The copies are grouped into one module (``langs``: every weight
    stacked over the languages, ``models/ls/grouped.py``) that takes a batch of several languages at once, its rows
    tiled by language; copies that cannot be grouped stay a ``ModuleList`` called language by language.
    """

    def __init__(self, modules: Sequence[nn.Module], index: Index) -> None:
        super().__init__()
        if index not in ("src", "tgt"):
            raise ValueError(f"index language must be 'src' or 'tgt', got {index!r}")
        fused = fuse(modules)
        self.langs = fused if fused is not None else nn.ModuleList(modules)
        self.languages = len(modules)
        self.index = index

    def forward(self, x: Tensor, langs: LangContext, *args: Any, **kwargs: Any) -> Tensor:
        return _call(self.langs, self.languages, self.index, x, langs, *args, **kwargs)

    def one(self, lang: int, x: Tensor, langs: LangContext, *args: Any, **kwargs: Any) -> Tensor:
        """Language ``lang``'s module on every row."""
        return _one(self.langs, lang, x, langs, *args, **kwargs)

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        """The index language's module only (|θeff|)."""
        yield from _language_parameters(self.langs, src if self.index == "src" else tgt, src, tgt)

    def extra_repr(self) -> str:
        return f"index={self.index}, languages={self.languages}"


class SearchLayer(nn.Module):
    """Eq. 1: a shared layer and one LSL (source- and target-indexed) mixed by ``softmax(mixing)``."""

    def __init__(self, shared: nn.Module, per_language: Sequence[nn.Module],
                 mixing_init: Sequence[float] = (0.0, 0.0, 0.0)) -> None:
        super().__init__()
        self.shared = shared
        fused = fuse(per_language)
        self.langs = fused if fused is not None else nn.ModuleList(per_language)
        self.languages = len(per_language)
        self.mixing = nn.Parameter(torch.tensor([float(a) for a in mixing_init]))

    def weights(self) -> Tensor:
        """``(w_shared, w_src, w_tgt)``, non-negative and summing to 1 (footnote 2)."""
        return self.mixing.softmax(0)

    def forward(self, x: Tensor, langs: LangContext, padding_mask: Tensor | None) -> Tensor:
        """``x (B, S, D)`` -> ``(B, S, D)``."""
        w = self.weights()
        return (w[0] * self.shared(x, langs, padding_mask)
                + w[1] * _call(self.langs, self.languages, "src", x, langs, padding_mask)
                + w[2] * _call(self.langs, self.languages, "tgt", x, langs, padding_mask))

    def one(self, lang: int, x: Tensor, langs: LangContext, padding_mask: Tensor | None) -> Tensor:
        """Language ``lang``'s LSL on every row."""
        return _one(self.langs, lang, x, langs, padding_mask)

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        yield self.mixing
        yield from active_parameters(self.shared, src, tgt)
        for lang in (src, tgt):
            yield from _language_parameters(self.langs, lang, src, tgt)


def _call(langs_module: nn.Module, languages: int, index: str, x: Tensor, langs: LangContext, *args: Any,
          **kwargs: Any) -> Tensor:
    if isinstance(langs_module, nn.ModuleList):
        return route(langs_module, index, x, langs, *args, **kwargs)
    return grouped_call(langs_module, languages, index, x, langs, *args, **kwargs)


def _one(langs_module: nn.Module, lang: int, x: Tensor, langs: LangContext, *args: Any, **kwargs: Any) -> Tensor:
    if isinstance(langs_module, nn.ModuleList):
        return langs_module[lang](x, langs, *args, **kwargs)
    return call_one(langs_module, lang, x, langs, *args, **kwargs)


def _language_parameters(langs_module: nn.Module, lang: int, src: int, tgt: int) -> Iterator[Tensor]:
    """Language ``lang``'s parameters: its copy's, or its slice of every grouped weight."""
    if isinstance(langs_module, nn.ModuleList):
        yield from active_parameters(langs_module[lang], src, tgt)
    else:
        yield from (p[lang] for p in langs_module.parameters())


# --- builders ------------------------------------------------------------------------------------------------------

def build(cfg: LSLConfig, defaults: Factories) -> Factories:
    """``defaults`` with the layers of ``cfg.src`` / ``cfg.tgt`` (1-based) made language-specific."""
    if cfg.architecture is not None:
        raise ValueError(f"this LSL method takes its layers from search {cfg.architecture!r}: bind them first "
                         "(lsnmt.methods.bind reads the search stage's architecture.json)")
    index = {**{n: "src" for n in cfg.src}, **{n: "tgt" for n in cfg.tgt}}

    def encoder_layer(spec: LayerSpec, f: Factories) -> nn.Module:
        beyond = [n for n in index if n > spec.num_layers]
        if beyond:
            raise ValueError(f"{cfg.describe()}: layer {max(beyond)} is beyond the {spec.num_layers}-layer encoder")
        which = index.get(spec.layer + 1)
        if which is None:
            return defaults.encoder_layer(spec, f)
        n = spec.num_languages
        if cfg.components == "layer":
            return LanguageSpecific([defaults.encoder_layer(spec, f) for _ in range(n)], which)  # type: ignore[arg-type]
        if cfg.components == "ffn":
            ls = dataclasses.replace(f, ffn=lambda s: LanguageSpecific([f.ffn(s) for _ in range(n)], which))
        else:
            ls = dataclasses.replace(f, attn=lambda s, kind: LanguageSpecific([f.attn(s, kind) for _ in range(n)],
                                                                               which))
        return defaults.encoder_layer(spec, ls)

    return dataclasses.replace(defaults, encoder_layer=encoder_layer)


def search_factories(cfg: LSLSearchConfig, defaults: Factories | None = None) -> Factories:
    """Every encoder layer a :class:`SearchLayer` of ``1 + L`` layers of ``defaults`` (Sec. 3.2)."""
    base = defaults or Factories()

    def encoder_layer(spec: LayerSpec, f: Factories) -> nn.Module:
        return SearchLayer(base.encoder_layer(spec, f), [base.encoder_layer(spec, f)
                                                         for _ in range(spec.num_languages)], cfg.mixing_init)

    return dataclasses.replace(base, encoder_layer=encoder_layer)


# --- search read-out and dense pre-training -------------------------------------------------------------------------

_MIXING = re.compile(r"^encoder\.layers\.(\d+)\.mixing$")


def mixing_weights(state: Mapping[str, Tensor]) -> Tensor:
    """``(layers, 3)`` softmax weights (shared, src, tgt) of a search model's state dict, bottom layer first."""
    found = {int(m.group(1)): t for k, t in state.items() if (m := _MIXING.match(k))}
    if not found or sorted(found) != list(range(len(found))):
        raise ValueError(f"not a search model: mixing scalars found for encoder layers {sorted(found)}")
    return torch.stack([found[i].float().softmax(0) for i in range(len(found))])


def select(weights: Tensor) -> list[str]:
    """Per layer, the component with the largest weight (Sec. 3.2): ``shared``, ``src`` or ``tgt``.

    Exact ties go to the earlier of shared, src, tgt (``torch.argmax`` returns the first maximum).
    """
    if weights.dim() != 2 or weights.size(1) != 3:
        raise ValueError(f"expected (layers, 3) weights, got {tuple(weights.shape)}")
    return [CHOICES[int(i)] for i in weights.argmax(1)]


def layers_to_config(layers: Sequence[str]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``["shared", "src", "tgt"]`` -> ``src={2}``, ``tgt={3}`` (1-based)."""
    bad = [x for x in layers if x not in CHOICES]
    if bad:
        raise ValueError(f"unknown layer choice {bad[0]!r} (one of {', '.join(CHOICES)})")
    return (tuple(i + 1 for i, x in enumerate(layers) if x == "src"),
            tuple(i + 1 for i, x in enumerate(layers) if x == "tgt"))


_LANG_COPY = re.compile(r"\.langs(\.\d+)?(?=\.)")


def dense_name(name: str) -> str:
    """The dense weight that initialises ``name``: ``encoder.layers.3.langs.ffn…`` (every language's, stacked) or
    ``encoder.layers.3.langs.7.ffn…`` (copies that could not be grouped) -> ``encoder.layers.3.ffn…``."""
    return _LANG_COPY.sub("", name)


@torch.no_grad()
def dense_init(model: nn.Module, dense: Mapping[str, Tensor]) -> int:
    """Copy ``dense`` (a dense model's state dict) into ``model`` in place (Sec. 3.3); returns the tensors copied.

    Every language's copy of a language-specific module gets the weights of the dense module it replaces;
    all other weights are copied by name. Raises ``ValueError`` naming a weight the dense model lacks, one
    whose shape differs or one of the dense model's that has no counterpart (another width, depth or decoder type).
    """
    own = model.state_dict(keep_vars=True)
    unused = sorted(set(dense) - {dense_name(n) for n in own})
    if unused:
        raise ValueError(f"dense pre-training: the dense model's {unused[0]!r} has no counterpart here "
                         f"({len(unused)} unused tensors: another depth or decoder type?)")
    copied = 0
    for name, t in own.items():
        key = dense_name(name)
        if key not in dense:
            raise ValueError(f"dense pre-training: the dense model has no {key!r} (for {name!r})")
        stacked = key != name and _LANG_COPY.search(name).group(1) is None  # type: ignore[union-attr]
        shape = tuple(t.shape[1:] if stacked else t.shape)
        if tuple(dense[key].shape) != shape:
            raise ValueError(f"dense pre-training: {key!r} is {tuple(dense[key].shape)} in the dense model, "
                             f"{shape} here ({name!r})")
        t.copy_(dense[key])  # a stacked weight: the dense one for every language
        copied += 1
    return copied
