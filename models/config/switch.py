"""Config of the ``switch`` method kind, torch-free (its modules: ``models/ls/switch.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from lsnmt.typed import FieldError


@dataclass(frozen=True, kw_only=True)
class SwitchConfig:
    """Top-1 MoE FFNs in every ``every``-th layer."""

    experts: int = 16
    """Experts ``E`` per MoE layer (LMS-FD main tables: 16; Table 9: 4-16)."""
    every: int = 2
    """An MoE FFN in every ``every``-th layer of each stack."""
    capacity_factor: float = 1.0
    """Training capacity ``C = ceil(capacity_factor * tokens / E)``."""
    eval_capacity_factor: float | None = None
    """Capacity factor in eval mode (validation, decoding); ``None``: no limit, no token dropped (fairseq)."""
    balance_weight: float = 0.01
    """Weight of the load-balancing loss (LMS-FD Sec. 5.1: 0.01)."""

    def __post_init__(self) -> None:
        if self.experts < 1 or self.every < 1:
            raise FieldError("experts", f"experts and every must be >= 1, got {self.experts}, {self.every}")
        if self.capacity_factor <= 0 or (self.eval_capacity_factor is not None and self.eval_capacity_factor <= 0):
            raise FieldError("capacity_factor", "capacity factors must be > 0")
