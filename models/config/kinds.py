"""Every language-specific method kind, in one table: its config, its modules, its criterion and its traits.

``params.yaml``'s ``method_cfg.<name>: {kind: <kind>, ...}`` is built into ``KINDS[kind].config``
(``lsnmt/methods/schema.py``); ``models/build.py`` builds the kind's modules from ``KINDS[kind].build``; the
trainer takes its criterion from ``KINDS[kind].criterion``. The traits are everything the rest of the pipeline
asks of a kind (batching, training passes, inference routes, extra decoded systems, a searched layout, dense
pre-training, compute per token, the XLM-R tasks, the source the protocol cites), so that no generic code tests
kind names or probes a config's fields. The table is torch-free: ``build`` and ``criterion`` are references
``"module:attribute"`` imported when a model is built (:func:`load`), so loading ``params.yaml`` imports no torch.

Adding a kind: its config in ``models/config/<name>.py``, its modules in ``models/ls/<name>.py``, one entry here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from models.config import adapter, clm, clsr, deep, fd, lms, lsl, switch
from models.config.model import ModelConfig

ROUTES = ("share", "ls")
"""Fuse Distillation's two inference routes, Share and LS (LMS-FD Sec. 3.2, 5)."""


@dataclass(frozen=True, kw_only=True)
class Kind:
    """One method kind: config, modules, criterion and traits."""

    config: type
    """Frozen ``kw_only`` dataclass that a ``method_cfg`` entry is built into."""
    build: str
    """``"module:function"`` of ``build(method_cfg, factories) -> factories`` (``models.ls.base.LSBuilder``)."""
    criterion: str | None = None
    """``"module:function"`` of the training criterion (``models.ls.base.Criterion``); ``None``: the trainer's
    single-pass label-smoothed cross entropy."""
    source: str = ""
    """The paper and section the kind implements (the protocol's source column where a paper names none)."""
    model: Callable[[Any, ModelConfig], ModelConfig] | None = None
    """``model(method_cfg, model_cfg) -> model_cfg``: a kind that changes the architecture itself (Deep's depth,
    LSL's shape overrides, an adapter's width); ``None``: the experiment's model as is."""
    batching: Literal["direction", "mixed"] | None = None
    """The kind's training batches whatever ``train.batching`` says (Switch: mixed, LMS-FD v1 footnote 4);
    ``train.batching_by_kind`` overrides it; ``None``: the experiment's."""
    passes: int = 1
    """Forward-backward passes per training update: 2 for Fuse Distillation's criterion (LMS-FD Sec. 3-4)."""
    routes: tuple[str, ...] = ()
    """Inference routes one trained model is decoded through, besides its configured ``route`` (FD, LMS+FD:
    :data:`ROUTES`; the config has a ``route`` field); ``()``: one way through."""
    sweep: Callable[[Any], tuple[int, ...]] | None = None
    """``sweep(cfg)``: the values of a decoding sweep of one trained model, each one more system (CLM's top-w);
    ``with_sweep(cfg, w)`` decodes point ``w``."""
    with_sweep: Callable[[Any, int], Any] | None = None
    searched: Callable[[Any], str | None] | None = None
    """``searched(cfg)``: the search (``experiments.<exp>.search``) whose layout the method trains (LSL-NAS);
    ``with_layout(cfg, src, tgt)`` fills it in (``None`` values: the layout as it is, the search dropped)."""
    with_layout: Callable[..., Any] | None = None
    dense_steps: Callable[[Any], int] | None = None
    """``dense_steps(cfg)``: updates of a dense model trained first and copied in (LSL Sec. 3.3) by
    ``dense_init(model, dense_state) -> tensors copied`` (a ``"module:function"`` reference)."""
    dense_init: str | None = None
    dense_equivalent: bool = False
    """A token costs what it costs in the dense model (Switch: one expert per token; GPU-hour estimates)."""
    tasks: bool = False
    """Available in XLM-R's FFNs for the NER / QA tasks (LMS-FD Sec. 5.3-5.4)."""
    atp: bool = False
    """The model mixes shared and language-specific features by learned gates, whose average token proportion
    (ATP, CLM Sec. 5.1) evaluate reports (``lsnmt/eval/atp.py``)."""


KINDS: dict[str, Kind] = {
    "lms": Kind(config=lms.LMSConfig, build="models.ls.lms:build", tasks=True,
                source="Xu et al. 2023 Sec. 2 (LMS, pair- or language-wise)"),
    "lms_fd": Kind(config=lms.LMSFDConfig, build="models.ls.lms:build", criterion="models.ls.distill:lms_fd_criterion",
                   passes=2, routes=ROUTES, tasks=True, source="Xu et al. 2023 Sec. 4, Eq. 4 (LMS+FD)"),
    "fd": Kind(config=fd.FDConfig, build="models.ls.fd:build", criterion="models.ls.distill:fd_criterion", passes=2,
               routes=ROUTES, source="Xu et al. 2023 Sec. 3, Eq. 2-3 (Fuse Distillation)"),
    "switch": Kind(config=switch.SwitchConfig, build="models.ls.switch:build", batching="mixed",
                   dense_equivalent=True, source="Fedus et al. 2021 (Switch Transformer, top-1)"),
    "clsr": Kind(config=clsr.CLSRConfig, build="models.ls.clsr:build",
                 source="Zhang et al. 2021 (CLSR; share: false = CLSR*)"),
    "clm": Kind(config=clm.CLMConfig, build="models.ls.clm:build", sweep=clm.sweep, with_sweep=clm.with_top_w,
                atp=True, source="Liu et al. 2022 Sec. 3 (sCLM / mCLM / LS ablation)"),
    "adapter": Kind(config=adapter.AdapterConfig, build="models.ls.adapter:build", model=adapter.model,
                    source="Bapna and Firat 2019; Philip et al. 2020 (language adapters)"),
    "deep": Kind(config=deep.DeepConfig, build="models.ls.deep:build", model=deep.model,
                 source="Zhang et al. 2020 (Deep Transformer; CLM Sec. 4.2)"),
    "lsl": Kind(config=lsl.LSLConfig, build="models.ls.lsl:build", model=lsl.model, searched=lsl.searched,
                with_layout=lsl.with_layout, dense_steps=lsl.dense_steps, dense_init="models.ls.lsl:dense_init",
                source="Pires et al. 2023 Sec. 3.1-3.3 (LSL, LSL-NAS, dense pre-training)"),
}


def load(ref: str) -> Any:
    """The object a ``"module:attribute"`` reference of the table names (imported now)."""
    module, _, attr = ref.partition(":")
    return getattr(importlib.import_module(module), attr)


def _entry(kind: str | None) -> Kind | None:
    """``KINDS[kind]``; ``None`` for the naive model."""
    return None if kind is None else KINDS[kind]


def passes(kind: str | None) -> int:
    """Training passes per update of ``kind`` (``None``: the naive model, 1)."""
    return 1 if kind is None else KINDS[kind].passes


def routes(kind: str | None, cfg: Any) -> tuple[str, ...]:
    """The routes a trained model of ``kind`` (config ``cfg``) is decoded through, its configured ``cfg.route``
    first (FD, LMS+FD: ``(route, other)``, LMS-FD Sec. 3.2, 5); ``()`` for a method with one way through. The one
    answer to "which routes does this method have": every caller asks here."""
    own = () if kind is None else KINDS[kind].routes
    return (cfg.route, *(r for r in own if r != cfg.route)) if own else ()


def atp(kind: str | None) -> bool:
    """Whether evaluate reports the ATP of a model of ``kind`` (:attr:`Kind.atp`; the naive model: no)."""
    return kind is not None and KINDS[kind].atp


def batching(kind: str | None) -> Literal["direction", "mixed"] | None:
    """The kind's own training batches (``None``: the experiment's ``train.batching``)."""
    return None if kind is None else KINDS[kind].batching


def sweep(kind: str | None, cfg: Any) -> tuple[int, ...]:
    """The decoding sweep of a method (CLM's ``sweep_top_w``); ``()`` for a kind without one."""
    k = _entry(kind)
    return () if k is None or k.sweep is None else k.sweep(cfg)


def with_sweep(kind: str | None, cfg: Any, w: int) -> Any:
    """``cfg`` decoding sweep point ``w``; ``ValueError`` for a kind without a sweep."""
    k = _entry(kind)
    if k is None or k.with_sweep is None:
        raise ValueError(f"top_w {w}: only a CLM model mixes features (got {kind or 'naive'})")
    return k.with_sweep(cfg, w)


def searched(kind: str | None, cfg: Any) -> str | None:
    """The search whose layout the method trains (LSL-NAS); ``None``: none."""
    k = _entry(kind)
    return None if k is None or k.searched is None else k.searched(cfg)


def with_layout(kind: str | None, cfg: Any, src: tuple[int, ...] | None = None,
                tgt: tuple[int, ...] | None = None) -> Any:
    """``cfg`` with a searched layout filled in (``None``: the layout as it is, the search dropped); a kind
    without a searched layout: ``cfg``."""
    k = _entry(kind)
    return cfg if k is None or k.with_layout is None else k.with_layout(cfg, src, tgt)


def dense_steps(kind: str | None, cfg: Any) -> int:
    """Updates of dense pre-training of a method (LSL Sec. 3.3); 0: none."""
    k = _entry(kind)
    return 0 if k is None or k.dense_steps is None else k.dense_steps(cfg)
