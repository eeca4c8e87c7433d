"""The entry of the stages that read the whole typed params.yaml (``Params.load``: every section checked), from
which they take their experiment and job lists: ``report`` (every experiment) and a test's toy stage (:func:`run`).

Every stage of an experiment loads its view only (:func:`lsnmt.runner.base.run_stage`); identity arguments, logging
and the guard every stage shares are :mod:`lsnmt.runner.base`'s.
"""

from __future__ import annotations

import argparse

from lsnmt.experiment.params import Experiment, Params
from lsnmt.runner.base import guarded, load_or_exit, parse_args


def stage_args(name: str, argv: list[str] | None = None, **extra: str) -> tuple[argparse.Namespace, Experiment]:
    """Parse ``--experiment/--params/--log`` (plus ``extra`` identity flags), load and validate params."""
    args = parse_args(name, argv, **extra)
    return args, load_or_exit(name, lambda: Params.load(args.params).get(args.experiment))


def run(name: str, fn, argv: list[str] | None = None) -> None:
    """Run ``fn(exp)`` for a stage that depends only on the experiment."""
    _args, exp = stage_args(name, argv)
    guarded(name, lambda: fn(exp), (exp.name, None))
