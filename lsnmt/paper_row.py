"""One row of a paper's parameter table, with the configuration the paper states (``lsnmt.accounting``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from lsnmt.config import ModelConfig

LMS_PAPER = "LMS-FD (Xu et al. 2023)"


@dataclass(frozen=True, kw_only=True)
class PaperRow:
    """One naive-model row of a paper's table, with the configuration the paper states."""

    paper: str
    table: str
    experiment: str
    method: str = "naive"
    model: ModelConfig | None = None
    """The encoder-decoder Transformer the row counts; ``None`` for an XLM-R row (``xlmr``)."""
    xlmr: Literal["ner", "qa"] | None = None
    """The row counts XLM-R base (``models.xlmr.XLMR_BASE``) with this task's head (LMS-FD Tables 4-5)."""
    vocab_size: int
    """Embedding rows under the paper's stated configuration (a fairseq dictionary built from it, if the paper
    fixes that too: :func:`fairseq_dict_size`)."""
    num_languages: int
    paper_train_params: int
    paper_inference_params: int
    paper_unit: int = 1_000_000
    """Rounding unit of the paper's figures (1M: "48M"; 10K: "76.96M")."""
    implied_vocab_size: int | None = None
    """Embedding rows the paper's figures imply, where the stated ones miss by more than 2%."""
    note: str = ""
    kind: str | None = None
    """Language-specific method kind (``models.ls.LS_KINDS``); ``None``: the naive model."""
    cfg: Any = None
    """The kind's typed config (e.g. ``LMSConfig(rank=32)``)."""
    inference: Literal["direction", "deployed"] = "direction"
    """What the paper's inference column counts: one direction's parameters, or all directions' (LMS-FD)."""
    implied_cfg: Any = None
    """The method config the paper's figures imply, where the stated reading misses by more than 2%."""
    explained_miss: bool = False
    """No faithful reading reaches 2%; ``note`` says exactly why."""
    counts: Literal["total", "extra"] = "total"
    """``extra``: the paper's figures are parameters added to the naive model (LMS-FD Table 9)."""

    def __post_init__(self) -> None:
        if (self.model is None) == (self.xlmr is None):
            raise ValueError(f"{self.table}/{self.method}: give exactly one of model (Transformer) and xlmr (XLM-R)")
