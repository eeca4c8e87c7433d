"""The ``decode`` section (fairseq's beam search settings) and the view of ``translate@<method>``
(:mod:`lsnmt.view`). Torch-free, as the stage table and ``lsnmt.experiment.params`` read them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from lsnmt.data.config import DataConfig
from lsnmt.methods.schema import MethodTable
from lsnmt.train.config import TrainConfig
from lsnmt.typed import Count, FieldError, NonNegative, Range
from lsnmt.view import section
from models.config.model import ModelConfig


@dataclass(frozen=True, kw_only=True)
class DecodeConfig:
    beam: Count = 5
    lenpen: Annotated[float, Range()] = 1.0
    """Hypothesis score = sum log p / length^lenpen (fairseq)."""
    max_len_a: NonNegative = 1.2
    max_len_b: Annotated[int, Range(ge=0)] = 10
    """Hypotheses stop at a * source length + b tokens."""
    max_tokens: Count = 8000
    max_sentences: Count | None = None
    """Translate only the first N test sentences of each direction (quick runs; ``None``: all)."""
    cpu_threads: Count = 2
    """``torch.set_num_threads`` of the ``translate`` stage and its Snakemake rule's ``threads``
    (:attr:`TrainConfig.cpu_threads`: the same hypotheses whatever the core count)."""

    def __post_init__(self) -> None:
        if self.max_len_a == 0 and self.max_len_b == 0:
            raise FieldError("max_len_b", "with max_len_a 0 too, hypotheses could have no token")


@dataclass(frozen=True, kw_only=True)
class TranslateView:
    """What ``translate@<method>`` reads (:mod:`lsnmt.view`): the test sets (``data``), the model's shape, the beam
    search, the method's own entry, and ``train`` (its ``max_target_positions`` caps the hypotheses,
    :attr:`decode_positions`; its ``max_steps`` is named in the length-limit warning). The whole ``train`` section,
    not those two keys: DVC stops on a tracked key that params.yaml does not write, and a change of ``train`` reruns
    translate through the retrained ``model.pt`` anyway."""

    data: DataConfig
    model: ModelConfig = field(default_factory=ModelConfig)
    decode: DecodeConfig = field(default_factory=DecodeConfig)
    method_cfg: MethodTable = section("method_cfg.{method}", default_factory=dict)
    """``{method: its entry}``, typed at load (none for ``naive`` without one: :func:`lsnmt.methods.resolve`)."""
    train: TrainConfig = field(default_factory=TrainConfig)

    @property
    def decode_positions(self) -> int:
        """:attr:`Experiment.decode_positions`: the smaller of ``model.max_positions`` and
        ``train.max_target_positions``."""
        return min(self.model.max_positions, self.train.max_target_positions)
