"""Protocols every language-specific (LS) module follows, and the active-parameter walk.

An LS module stands in for a shared sub-module of a layer (``models/factories.py``):
it is called with the same arguments, ``module(x, langs, …)``, and chooses its
per-language weights from ``langs`` (a :class:`~models.lang.LangContext`).
Protocols, not base classes (torchtune): nothing is inherited.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from torch import Tensor, nn

from models.lang import LangContext

if TYPE_CHECKING:
    from models.factories import Factories


@runtime_checkable
class HasAuxLoss(Protocol):
    def aux_loss(self) -> Tensor | None:
        """Auxiliary loss of the last forward (MoE balance, CLSR budget), or ``None``."""
        ...


@runtime_checkable
class LSModule(Protocol):
    """A language-specific replacement for a feed-forward-like sub-module.

    Attention replacements take the attention keywords as well:
    ``forward(x, langs, memory=None, *, key_padding_mask, causal, cache)``.
    """

    def forward(self, x: Tensor, langs: LangContext) -> Tensor: ...

    def aux_loss(self) -> Tensor | None: ...


@runtime_checkable
class ReportsActiveParams(Protocol):
    """A module whose parameters are not all used for every direction (per-language weights)."""

    def active_parameters(self, src: int, tgt: int) -> Iterator[Tensor]:
        """What a forward pass for ``src -> tgt`` uses at inference time: parameters, or views of the
        per-language slices of a parameter (e.g. ``self.weight[tgt]``)."""
        ...


LSBuilder = Callable[[Any, "Factories"], "Factories"]
"""``build(method_cfg, defaults) -> factories``: a kind's ``build`` (``models.config.kinds.KINDS``)."""


class SampleLike(Protocol):
    """What a training criterion reads of a collated batch (``lsnmt.data.corpus.Sample``)."""

    @property
    def src_tokens(self) -> Tensor: ...  # (B, S)

    @property
    def prev_output_tokens(self) -> Tensor: ...  # (B, T)

    @property
    def target(self) -> Tensor: ...  # (B, T)

    @property
    def langs(self) -> LangContext: ...


Criterion = Callable[[nn.Module, SampleLike, float, int], tuple[Tensor, Tensor, int]]
"""``criterion(model, sample, label_smoothing, pad) -> (loss, nll, ntokens)``: summed losses of one micro-batch.

The trainer's default is one forward and label-smoothed cross entropy
(``lsnmt.train.loss.default_criterion``); a method with another objective (Fuse
Distillation's two passes, ``models/ls/distill.py``) names its own in its kind's entry
(``models.config.kinds.KINDS``).
"""


def active_parameters(module: nn.Module, src: int, tgt: int) -> Iterator[Tensor]:
    """Parameters (or per-language slices) used for ``src -> tgt``; tied ones may repeat (deduplicate by identity).

    A module that implements :class:`ReportsActiveParams` answers for its subtree;
    any other module contributes its own parameters and recurses into its children (:func:`split_active`).
    """
    shared, reporting = split_active(module)
    yield from shared
    for m in reporting:
        yield from m.active_parameters(src, tgt)  # type: ignore[operator]


def split_active(module: nn.Module) -> tuple[list[Tensor], list[nn.Module]]:
    """The tree walk of :func:`active_parameters`: (the parameters of the modules that do not report theirs, which
    every direction uses; the topmost modules that implement :class:`ReportsActiveParams`). The protocol is checked
    on the class: a runtime protocol's ``isinstance`` is ~100x slower, and counting the papers' models walks a lot.
    """
    shared: list[Tensor] = []
    reporting: list[nn.Module] = []
    stack = [module]
    while stack:
        m = stack.pop()
        if getattr(type(m), "active_parameters", None) is not None:
            reporting.append(m)
        else:
            shared.extend(m.parameters(recurse=False))
            stack.extend(m.children())
    return shared, reporting
