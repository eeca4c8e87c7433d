"""Config of the ``clm`` method kind, torch-free (its modules: ``models/ls/clm.py``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from lsnmt.typed import FieldError
from models.config.keys import Key

Mode = Literal["sclm", "mclm", "ls", "none"]
Mix = Literal["function", "checkpoint", "autograd"]
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
    """Eval mode only: keep the ``w`` largest proportions per token (Sec. 5.4, ``models/ls/clm.py``); ``None``: all."""
    top_w_renormalise: bool = True
    """Sec. 5.4 says only "selecting the top-w important features ... and pruning others": the kept proportions
    are renormalised to sum 1 (``True``, our choice: the mix stays a convex combination as in Eq. 2) or kept as
    they are (``False``)."""
    sweep_top_w: tuple[int, ...] = ()
    """Figure 4 (Sec. 5.4): the same trained model decoded again with each ``top_w`` listed, as the extra systems
    ``<method>_w<w>`` (``lsnmt.methods.systems``, decoded by the translate stage). Decoding only: training
    ignores it. ``()``: no sweep."""
    position: Literal["after", "inside"] = "after"
    """``after``: ``z = LN(y + y~)`` on the sublayer block's output ``y`` (post-norm: after its LayerNorm),
    a plug-in module between blocks (Sec. 3.3). ``inside``: on the sublayer's output ``f(x)`` before the
    block's residual, ``x' = LN_block(x + LN(f + f~))``."""
    mix: Mix = "function"
    """How training differentiates Eq. 2's mix (``models/ls/clm.py``; the same values and gradients): ``function``
    keeps only ``h`` and ``P(h)`` of each module and costs three bank products ``h W`` per update (forward, and two
    in the backward); ``checkpoint`` keeps the same and recomputes the forward in the backward (four products);
    ``autograd`` keeps the ``(tokens, k, d)`` products, ``modules x tokens x k x d`` floats across the model (12 GB
    for sCLM at k=194, 30 modules, 1,024 tokens): three products."""
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
        for i, w in enumerate(self.sweep_top_w):
            if not 1 <= w <= self.features:
                raise FieldError(f"sweep_top_w[{i}]", f"must be in [1, features={self.features}], got {w}")
            if i and w <= self.sweep_top_w[i - 1]:
                raise FieldError(f"sweep_top_w[{i}]", f"must be increasing, got {w} after {self.sweep_top_w[i - 1]}")
        gated = {self.encoder, self.decoder} & {"sclm", "mclm"}
        if (self.top_w is not None or self.sweep_top_w) and not gated:
            raise FieldError("sweep_top_w" if self.sweep_top_w else "top_w",
                             "needs a side with proportions (encoder or decoder sclm / mclm); the LS ablation has none")


def sweep(cfg: CLMConfig) -> tuple[int, ...]:
    """The top-w sparsity points decoded from one trained model besides itself (Sec. 5.4, Figure 4)."""
    return cfg.sweep_top_w


def with_top_w(cfg: CLMConfig, w: int) -> CLMConfig:
    """``cfg`` decoding with only the ``w`` largest feature proportions per token."""
    return dataclasses.replace(cfg, top_w=w)
