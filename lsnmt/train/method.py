"""A method's training set-up, in one place: kind, layout, batching, model factory, criterion (:func:`setup_method`).

``stages.train`` and the throughput benchmark build a method's training exactly as :func:`setup_method` says:

1. resolve the method's kind and typed config (``params.yaml``'s ``method_cfg.<name>``);
2. bind a searched layout (LSL-NAS: ``architecture: <search>`` reads the search stage's ``architecture.json``);
3. apply the kind's training settings (``train.batching_by_kind``: Switch trains on mixed-direction batches);
4. the model factory (``build_transformer`` with the method) and the kind's criterion (two passes for FD).

Dense pre-training (LSL Sec. 3.3, ``dense_steps``) trains a dense model first:
:func:`lsnmt.train.pretrain.dense_pretrained` wraps the factory where the stage runs it.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsnmt import methods
from models.build import build_transformer
from models.ls import criterion
from models.ls.base import Criterion

if TYPE_CHECKING:
    from lsnmt.config import Experiment
    from lsnmt.train.trainer import ModelFactory


@dataclass(frozen=True, kw_only=True)
class MethodSetup:
    """What the trainer needs to train one method."""

    exp: Experiment
    """The experiment with the kind's training settings applied (:meth:`TrainConfig.for_kind`)."""
    name: str
    kind: str | None
    """``None``: the naive model."""
    cfg: Any
    """The kind's typed config, its searched layout bound."""
    factory: ModelFactory
    criterion: Criterion | None
    """``None``: label-smoothed cross entropy."""
    record: dict[str, Any] | None
    """What ``model.pt`` stores of the method (:func:`lsnmt.methods.record`)."""


def setup_method(exp: Experiment, name: str, results: Path = Path("results")) -> MethodSetup:
    """Method ``name`` of ``exp`` ready to train (module docstring); raises ``ConfigError`` / ``DataError``
    naming an unknown method or a missing search result."""
    kind, cfg = methods.resolve(exp, name)
    cfg = methods.bind(exp, name, kind, cfg, results=results)
    return MethodSetup(exp=dataclasses.replace(exp, train=exp.train.for_kind(kind)), name=name, kind=kind, cfg=cfg,
                       factory=functools.partial(build_transformer, method=kind, method_cfg=cfg),
                       criterion=criterion(kind), record=methods.record(name, kind, cfg))
