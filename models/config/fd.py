"""Config of the ``fd`` method kind, torch-free (its modules: ``models/ls/fd.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Route = Literal["ls", "share"]


@dataclass(frozen=True, kw_only=True)
class FDConfig:
    """FD (Sec. 3): a language-level MoE beside a shared FFN in every layer."""

    route: Route = "share"
    """Inference route: ``share`` (FD, default) or ``ls`` (FD-LS). The pipeline decodes the other one as well,
    from the same weights (``lsnmt/methods/__init__.py``: systems ``fd`` and ``fd_ls``)."""
    decoder_language: Literal["tgt", "src"] = "tgt"
    """Language whose expert a decoder FFN uses (the encoder always uses the source language)."""
