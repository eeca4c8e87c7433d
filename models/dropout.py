"""Dropout (Srivastava et al. 2014) as one operation on every device: :class:`Dropout`.

``y = x * m / (1 - p)``, ``m ~ Bernoulli(1 - p)`` per element, in training; ``y = x`` otherwise. ``nn.Dropout``
reaches ATen's ``dropout``, which runs the fused ``native_dropout`` kernel on a GPU but, on a CPU, four operations
(``empty_like``, ``bernoulli_``, ``div_``, ``mul``). This module calls ``native_dropout`` itself (the same
Bernoulli draws, one operation forward and one backward everywhere), so that the operation count a CPU test holds
(``models/opcount.py``) is the one a GPU dispatches.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn


class Dropout(nn.Module):
    """``nn.Dropout(p)`` through ``torch.native_dropout`` (module docstring); no parameters, no state."""

    def __init__(self, p: float = 0.0) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        self.p = p

    def forward(self, x: Tensor) -> Tensor:
        if not self.training or self.p == 0.0:
            return x
        return torch.native_dropout(x, self.p, True)[0]

    def extra_repr(self) -> str:
        return f"p={self.p}"
