"""Training one method, in one place: :func:`train_method` (the set-up alone: :func:`setup_method`).

The train stage, the claim stage, the system tests' harness, the learning-curve script and the throughput
benchmark all train a method through here, so that a method trains the same way wherever it runs:

1. resolve the method's kind and typed config (``params.yaml``'s ``method_cfg.<name>``; ``lsnmt.methods``);
2. bind a searched layout (LSL-NAS: ``architecture: <search>`` reads the search stage's ``architecture.json``);
3. apply the kind's training batches (``Kind.batching``, ``train.batching_by_kind``: Switch trains on
   mixed-direction batches; :func:`lsnmt.methods.train_settings`);
4. the model factory (``build_transformer`` with the method) and the kind's criterion (two passes for FD);
5. dense pre-training where the kind asks for it (LSL Sec. 3.3, ``dense_steps``:
   :func:`lsnmt.train.pretrain.dense_pretrained`), then :func:`lsnmt.train.trainer.train`.

Everything a kind changes comes from its entry in ``models.config.kinds.KINDS``: nothing here names a kind.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lsnmt import methods
from lsnmt.train.pretrain import dense_pretrained
from lsnmt.train.trainer import Training, train
from models.build import build_transformer
from models.config import kinds
from models.ls import criterion
from models.ls.base import Criterion

if TYPE_CHECKING:
    from lsnmt.train.trainer import ModelFactory


class MethodTraining(Training, Protocol):
    """A training (:class:`lsnmt.train.trainer.Training`) with its methods' entries, ``method_cfg`` (the train
    stage's view, :class:`lsnmt.train.config.TrainView`, holds its method's only)."""

    @property
    def method_cfg(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, kw_only=True)
class MethodSetup:
    """What the trainer needs to train one method."""

    spec: Training
    """What it trains, with the kind's training settings applied (:func:`lsnmt.methods.train_settings`)."""
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

    @property
    def dense_steps(self) -> int:
        """Updates of dense pre-training before the method trains (0: none)."""
        return kinds.dense_steps(self.kind, self.cfg)


def setup_method(spec: MethodTraining, exp_name: str, name: str, results: Path = Path("results")) -> MethodSetup:
    """Method ``name`` of ``spec`` (of experiment ``exp_name``) ready to train (module docstring, steps 1-4);
    raises ``ConfigError`` / ``DataError`` naming an unknown method or a missing search result (``results``: where
    the search wrote it)."""
    kind, cfg = methods.resolve(spec.method_cfg, name, f"experiments.{exp_name}.method_cfg")
    cfg = methods.bind(exp_name, spec.model, name, kind, cfg, results=results)
    return MethodSetup(spec=dataclasses.replace(spec, train=methods.train_settings(spec.train, kind)), name=name,
                       kind=kind, cfg=cfg, factory=functools.partial(build_transformer, method=kind, method_cfg=cfg),
                       criterion=criterion(kind), record=methods.record(name, kind, cfg))


def train_method(spec: MethodTraining, exp_name: str, name: str, bin_dir: Path, out_dir: Path, work_dir: Path, *,
                 results: Path = Path("results")) -> dict[str, Any]:
    """Train method ``name`` of ``spec`` (of experiment ``exp_name``) on the shards in ``bin_dir`` (module
    docstring): checkpoints in ``work_dir`` (resumed when present; a dense pre-training phase beside it,
    ``<work_dir>.dense``), ``model.pt`` and ``curve.tsv`` in ``out_dir``. Returns :func:`lsnmt.train.trainer.train`'s
    summary; raises what it raises (``Interrupted`` after SIGTERM / SIGUSR1, a checkpoint saved)."""
    m = setup_method(spec, exp_name, name, results)
    factory = m.factory
    if m.dense_steps:
        factory = dense_pretrained(m.spec, name, m.kind, m.cfg, bin_dir, work_dir, factory)
    return train(m.spec, bin_dir, out_dir, work_dir, model_factory=factory, criterion=m.criterion, method=m.record)
