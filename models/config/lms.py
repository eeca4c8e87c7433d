"""Config of the ``lms`` method kind, torch-free (its modules: ``models/ls/lms.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lsnmt.typed import FieldError

Route = Literal["ls", "share"]


@dataclass(frozen=True, kw_only=True)
class LMSConfig:
    """LMS on the FFN (default) and/or attention projections (Sec. 2, Table 6)."""

    rank: int = 8
    """Rank ``d`` of the factors ``Wv[l]`` (r x d) and ``Wf[l]`` (d x c) (IWSLT'14: 32; OPUS-100: 64/16/4)."""
    synthesis: Literal["pair", "language"] = "pair"
    """``pair``: ``Wv[src] Wf[tgt]`` (default, Sec. 2.1); ``language``: ``Wv[l] Wf[l]``."""
    decoder_language: Literal["tgt", "src"] = "tgt"
    """Language-wise synthesis only: the decoder's language (``src`` as in the reference code)."""
    where: Literal["ffn", "attention", "both"] = "ffn"
    """``ffn``: fc1 and fc2 of every FFN; ``attention``: q/k/v/out of every attention; ``both`` (Table 6)."""
    attention: tuple[Literal["self", "cross"], ...] = ("self",)
    """Attentions that get LMS with ``where: attention|both``. Self-attention only by default: Table 6's
    77M/96M (OPUS-15, d=20) need 12 attention modules; with the decoder's cross-attentions they would be 84M/104M."""
    every: int = 1
    """LMS in every ``every``-th layer of each stack (1-based: layers k, 2k, ...)."""
    init_std: float = 0.01
    """Standard deviation of the Gaussian ``Wv`` (``Wf`` starts at zero)."""

    def __post_init__(self) -> None:
        if self.rank < 1:
            raise FieldError("rank", f"must be >= 1, got {self.rank}")
        if self.every < 1:
            raise FieldError("every", f"must be >= 1, got {self.every}")


@dataclass(frozen=True, kw_only=True)
class LMSFDConfig(LMSConfig):
    """LMS+FD (Sec. 4): LMS plus one shared pair, trained with two passes and a symmetric KL (Eq. 4)."""

    route: Route = "share"
    """Inference route: ``share`` (LMS+FD-Share, default) or ``ls`` (LMS+FD-LS). The pipeline decodes the other
    one as well, from the same weights (``lsnmt/methods/__init__.py``: systems ``lms_fd`` and ``lms_fd_ls``)."""
