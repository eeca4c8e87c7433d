"""Config of the ``lsl`` method kind, torch-free (its modules: ``models/ls/lsl.py``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

from lsnmt.typed import FieldError, Seed
from models.config.model import ModelConfig

Index = Literal["src", "tgt"]
Component = Literal["layer", "ffn", "attention"]
Decoder = Literal["shared", "per-target"]
CHOICES = ("shared", "src", "tgt")
"""Order of the three mixing weights of a search layer and the names of the per-layer choices."""


def _check_layers(name: str, layers: tuple[int, ...]) -> None:
    for i, n in enumerate(layers):
        if n < 1:
            raise FieldError(f"{name}[{i}]", f"encoder layers are numbered from 1 (LSL footnote 1), got {n}")
    if len(set(layers)) != len(layers):
        raise FieldError(name, f"repeated layer in {list(layers)}")


def _reshape(base: ModelConfig, **changes: Any) -> ModelConfig:
    return dataclasses.replace(base, **{k: v for k, v in changes.items() if v is not None})


@dataclass(frozen=True, kw_only=True)
class LSLConfig:
    """One LSL architecture (a method of kind ``lsl``); with no ``src`` and ``tgt`` it is the dense model."""

    src: tuple[int, ...] = ()
    """1-based encoder layers indexed by the source language."""
    tgt: tuple[int, ...] = ()
    """1-based encoder layers indexed by the target language."""
    architecture: str | None = None
    """Name of a search (``experiments.<exp>.search``) whose selected architecture gives ``src`` / ``tgt``
    (LSL-NAS from the ``search`` stage; ``lsnmt.methods.bind`` reads it). Exclusive with ``src`` / ``tgt``."""
    components: Component = "layer"
    """``layer``: whole layers (LSL); ``ffn``: LS-FFN; ``attention``: LS-ATTENTION (Table 4)."""
    dense_steps: int = 0
    """Dense pre-training (Sec. 3.3): first train the dense model of the same shape for this many updates, then
    copy its weights into every language's copy and train this model (``train.max_steps``, fresh optimizer and
    schedule; the paper does not give the second phase's schedule). 0: from scratch."""
    encoder_layers: int | None = None
    decoder_layers: int | None = None
    decoder: Decoder | None = None
    """Shape overrides of the experiment's model (``None``: keep it): depth, and ``shared`` vs ``per-target``
    decoders (LSL-NAS-SD, Table 5, on the separate-decoder experiment)."""
    embed_dim: int | None = None
    """Width override: the "hidden dim 640 / 704 / 768" baselines of Tables 1 and 5 (no LSLs)."""

    def __post_init__(self) -> None:
        _check_layers("src", self.src)
        _check_layers("tgt", self.tgt)
        both = sorted(set(self.src) & set(self.tgt))
        if both:
            raise FieldError("tgt", f"layer {both[0]} is also in src: a layer has one index language")
        if self.architecture is not None and (self.src or self.tgt):
            raise FieldError("architecture", "takes src/tgt from the search: leave src and tgt out")
        if self.dense_steps < 0:
            raise FieldError("dense_steps", f"must be >= 0, got {self.dense_steps}")

    def describe(self) -> str:
        """The paper's notation, ``LSL (SRC={3, 4} & TGT={13, 14, 15})``."""
        def s(x: tuple[int, ...]) -> str:
            return "{" + ", ".join(map(str, sorted(x))) + "}" if x else "∅"
        return f"LSL (SRC={s(self.src)} & TGT={s(self.tgt)})"


@dataclass(frozen=True, kw_only=True)
class LSLSearchConfig:
    """One architecture search (``experiments.<exp>.search.<name>``, the ``search`` stage, Sec. 3.2)."""

    seeds: tuple[Seed, ...] = (1,)
    """One training run per seed; the weights are averaged over runs before the argmax (Figure 3: 3 runs)."""
    max_steps: int | None = None
    """Updates of each run (``None``: the experiment's ``train.max_steps``; the paper trains to convergence)."""
    mixing_init: tuple[float, ...] = (0.0, 0.0, 0.0)
    """Initial scalars (shared, src, tgt) before the softmax; the paper does not say: equal weights 1/3."""
    encoder_layers: int | None = None
    decoder_layers: int | None = None
    decoder: Decoder | None = None
    """Shape overrides, as for :class:`LSLConfig` (Sec. 4.4 searches with a shared decoder)."""
    embed_dim: int | None = None

    def __post_init__(self) -> None:
        if not self.seeds:
            raise FieldError("seeds", "at least one run")
        if len(set(self.seeds)) != len(self.seeds):
            raise FieldError("seeds", f"repeated seed in {list(self.seeds)}")
        if len(self.mixing_init) != 3:
            raise FieldError("mixing_init", f"three scalars (shared, src, tgt), got {list(self.mixing_init)}")
        if self.max_steps is not None and self.max_steps < 1:
            raise FieldError("max_steps", f"must be >= 1, got {self.max_steps}")


def model(cfg: LSLConfig | LSLSearchConfig, base: ModelConfig) -> ModelConfig:
    """``base`` with the method's shape overrides."""
    return _reshape(base, encoder_layers=cfg.encoder_layers, decoder_layers=cfg.decoder_layers, decoder=cfg.decoder,
                    embed_dim=cfg.embed_dim)


# --- routing -------------------------------------------------------------------------------------------------------


def searched(cfg: LSLConfig) -> str | None:
    """The search whose selected layout ``cfg`` trains (LSL-NAS, Sec. 3.2); ``None``: a given layout."""
    return cfg.architecture


def with_layout(cfg: LSLConfig, src: tuple[int, ...] | None = None, tgt: tuple[int, ...] | None = None) -> LSLConfig:
    """``cfg`` with its searched layout filled in (``src`` / ``tgt``; ``None``: as it is) and no search left."""
    return dataclasses.replace(cfg, src=cfg.src if src is None else tuple(src),
                               tgt=cfg.tgt if tgt is None else tuple(tgt), architecture=None)


def dense_steps(cfg: LSLConfig) -> int:
    """Updates of dense pre-training before the LSL model trains (Sec. 3.3; 0: none)."""
    return cfg.dense_steps
