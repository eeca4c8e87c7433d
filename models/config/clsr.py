"""Config of the ``clsr`` method kind, torch-free (its modules: ``models/ls/clsr.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lsnmt.typed import FieldError

Sublayer = Literal["self", "cross", "ffn"]


@dataclass(frozen=True, kw_only=True)
class CLSRConfig:
    """CLSR (``share: true``) or CLSR* (``share: false``)."""

    budget: float = 0.3
    """Target fraction ``p`` of LS routing decisions (LMS-FD Sec. 5.1: 0.3)."""
    budget_weight: float = 1.0
    share: bool = True
    """One set of language projections per stack (CLSR) or per sublayer (CLSR*)."""
    sublayers: tuple[Sublayer, ...] = ("self", "cross", "ffn")
    """Sublayers followed by CLSR: ``self``/``cross`` attention (encoder: ``self`` only) and ``ffn``."""
    gate_hidden: int = 128
    noise_max: float = 5.0
    """Gate-noise scale at the end of training (ramped linearly from 0)."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.budget <= 1.0:
            raise FieldError("budget", f"must be in [0, 1], got {self.budget}")
