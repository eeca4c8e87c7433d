"""What the data stages' entry points (``stages/{download,prepare,spm,sample,encode,lm_data}.py``) share: the stage
runner's core (:mod:`lsnmt.runner.base`) over the experiment's data sections only
(:func:`lsnmt.data.config.load_data_experiment`), not the whole params.yaml: their code dependencies, in both front
ends, hold no method, model-training or x-elm schema, so editing one of those reruns no data stage. The other
sections are checked by every later stage (``Params.load``) and by ``lsnmt.graph``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from lsnmt.data.config import DataExperiment, load_data_experiment
from lsnmt.runner.base import guarded, load_or_exit, parse_args

E = TypeVar("E", bound=DataExperiment)


def run_data(name: str, fn: Callable[[E], object], cls: type[E], argv: list[str] | None = None) -> None:
    """Run ``fn(exp)`` as the data stage ``name``, ``exp`` the sections ``cls`` reads of ``--experiment``
    (:class:`~lsnmt.data.config.DataExperiment`; ``lm_data``: :class:`~lsnmt.xelm.config.LMDataExperiment`)."""
    args = parse_args(name, argv)
    exp = load_or_exit(name, lambda: load_data_experiment(args.params, args.experiment, cls))
    guarded(name, lambda: fn(exp), (exp.name, None))
