"""Config of the ``clm`` method kind, torch-free (its modules: ``models/ls/clm.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from lsnmt.typed import FieldError
from models.config.keys import Key

Mode = Literal["sclm", "mclm", "ls", "none"]
Sublayer = Literal["self", "cross", "ffn"]


@dataclass(frozen=True, kw_only=True)
class CLMConfig:
    """sCLM (default), mCLM, their -E/-D placements, Dedicated, -top, and the LS ablation."""

    features: int = 8
    """Number of features ``k`` (paper: 94 ablations, 194/280 OPUS-100, 35 WMT-14)."""
    encoder: Mode = "sclm"
    """CLM in the encoder: ``sclm`` (shared ``P``), ``mclm`` (``P`` per ``key``), ``ls`` (ablation), ``none``."""
    decoder: Mode = "sclm"
    """The same for the decoder (sCLM-E: decoder ``none``; Dedicated: encoder ``sclm``, decoder ``mclm``)."""
    key: Key = "pair"
    """Which ``P`` (mCLM) or map (LS) a direction uses: ``pair`` = English-centric pair (both directions of
    one model), ``tgt`` = the paper's one-to-many en-xx models, ``src`` its many-to-one xx-en models."""
    pivot: int = 0
    """Language id of English (params.yaml lists ``en`` first), for ``key: pair``."""
    sublayers: tuple[Sublayer, ...] = ("self", "cross", "ffn")
    """Sublayers followed by a CLM module (``[ffn]``: CLM-top, Table 9; the encoder has no ``cross``)."""
    proportion_per: Literal["layer", "sublayer"] = "layer"
    """One ``P`` per layer shared by its sublayers' modules (Sec. 3.3 and the sizes), or one per sublayer."""
    smoothing: float = 0.05
    """``a`` of Eq. 1 (App. B: 0.05)."""
    top_w: int | None = None
    """Eval mode only: keep the ``w`` largest proportions per token, renormalised (Sec. 5.4); ``None``: all."""
    position: Literal["after", "inside"] = "after"
    """``after``: ``z = LN(y + y~)`` on the sublayer block's output ``y`` (post-norm: after its LayerNorm),
    a plug-in module between blocks (Sec. 3.3). ``inside``: on the sublayer's output ``f(x)`` before the
    block's residual, ``x' = LN_block(x + LN(f + f~))``."""
    init: Literal["xavier", "zeros"] = "xavier"
    """``W_j``: Xavier-uniform per ``d x d`` map (fairseq's Linear init), or zeros (then ``z = LN(h)`` at
    step 0). ``P`` is always Xavier-uniform (``d x k``)."""

    def __post_init__(self) -> None:
        if self.features < 1:
            raise FieldError("features", f"must be >= 1, got {self.features}")
        if not 0.0 <= self.smoothing < 1.0:
            raise FieldError("smoothing", f"must be in [0, 1), got {self.smoothing}")
        if self.top_w is not None and not 1 <= self.top_w <= self.features:
            raise FieldError("top_w", f"must be in [1, features={self.features}], got {self.top_w}")
