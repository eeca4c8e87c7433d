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
    """Training capacity ``C = ceil(capacity_factor * n / E)`` tokens per expert, ``n`` the real tokens."""
    eval_capacity_fraction: float = 0.25
    """Eval-mode capacity (validation, decoding) ``C = ceil(eval_capacity_fraction * n)`` tokens per expert:
    fairseq's ``moe_eval_capacity_token_fraction`` and its default 0.25 (the reference fork's
    ``fairseq/modules/moe/top1gate.py``); <= 0 (fairseq: -1): the training capacity; 1: no token dropped."""
    balance_weight: float = 0.01
    """Weight of the load-balancing loss (LMS-FD Sec. 5.1: 0.01)."""

    def __post_init__(self) -> None:
        if self.experts < 1 or self.every < 1:
            raise FieldError("experts", f"experts and every must be >= 1, got {self.experts}, {self.every}")
        if self.capacity_factor <= 0:
            raise FieldError("capacity_factor", f"must be > 0, got {self.capacity_factor}")
        if self.eval_capacity_fraction > 1:
            raise FieldError("eval_capacity_fraction", f"a fraction of the tokens, at most 1 (<= 0: as in training), "
                                                       f"got {self.eval_capacity_fraction}")
