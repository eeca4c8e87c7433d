"""Every language-specific method kind: its typed config, the model it trains and its traits (torch-free).

``params.yaml``'s ``method_cfg.<name>: {kind: <kind>, ...}`` is built into ``KINDS[kind].config``
(``lsnmt/method_schema.py``). The traits are what the rest of the pipeline asks of a kind (training passes,
inference routes, compute per token, the XLM-R tasks), so that no code tests kind names. The kind's modules and
training criterion are its entry in ``models.ls.LS_KINDS`` (torch).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from models.config import adapter, clm, clsr, deep, fd, lms, lsl, switch
from models.config.model import ModelConfig

ROUTES = ("share", "ls")
"""Fuse Distillation's two inference routes, Share and LS (LMS-FD Sec. 3.2, 5)."""


@dataclass(frozen=True, kw_only=True)
class Kind:
    """One method kind's config and traits."""

    config: type
    """Frozen ``kw_only`` dataclass that a ``method_cfg`` entry is built into."""
    model: Callable[[Any, ModelConfig], ModelConfig] | None = None
    """``model(method_cfg, model_cfg) -> model_cfg``: a kind that changes the architecture itself (Deep's depth,
    LSL's shape overrides, an adapter's width); ``None``: the experiment's model as is."""
    passes: int = 1
    """Forward-backward passes per training update: 2 for Fuse Distillation's criterion (LMS-FD Sec. 3-4)."""
    routes: tuple[str, ...] = ()
    """Inference routes one trained model is decoded through, besides its configured ``route`` (FD, LMS+FD:
    :data:`ROUTES`); ``()``: one way through."""
    dense_equivalent: bool = False
    """A token costs what it costs in the dense model (Switch: one expert per token; GPU-hour estimates)."""
    tasks: bool = False
    """Available in XLM-R's FFNs for the NER / QA tasks (LMS-FD Sec. 5.3-5.4)."""


KINDS: dict[str, Kind] = {
    "lms": Kind(config=lms.LMSConfig, tasks=True),  # Xu et al. 2023 Sec. 2 (pair- or language-wise)
    "lms_fd": Kind(config=lms.LMSFDConfig, passes=2, routes=ROUTES, tasks=True),  # Sec. 4, Eq. 4
    "fd": Kind(config=fd.FDConfig, passes=2, routes=ROUTES),  # Sec. 3, Eq. 2-3
    "switch": Kind(config=switch.SwitchConfig, dense_equivalent=True),  # Fedus et al. 2021
    "clsr": Kind(config=clsr.CLSRConfig),  # Zhang et al. 2021 (share: false = CLSR*)
    "clm": Kind(config=clm.CLMConfig),  # Liu et al. 2022 Sec. 3: sCLM / mCLM / LS ablation
    "adapter": Kind(config=adapter.AdapterConfig, model=adapter.model),  # Bapna and Firat 2019; Philip et al. 2020
    "deep": Kind(config=deep.DeepConfig, model=deep.model),  # CLM Sec. 4.2 (Zhang et al. 2020)
    "lsl": Kind(config=lsl.LSLConfig, model=lsl.model),  # Pires et al. 2023 Sec. 3.1, Tables 1, 3-5
}


def passes(kind: str | None) -> int:
    """Training passes per update of ``kind`` (``None``: the naive model, 1)."""
    return 1 if kind is None else KINDS[kind].passes


def routes(kind: str | None) -> tuple[str, ...]:
    """The inference routes of ``kind`` (``()``: one way through)."""
    return () if kind is None else KINDS[kind].routes
