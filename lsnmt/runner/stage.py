"""What every ``python -m stages.<name>`` entry point of a stage past the data shares: identity arguments, logging
and its guard (:mod:`lsnmt.runner.base`, re-exported here), and the whole typed params.yaml (``Params.load``:
every section checked), from which the stage takes its experiment and job lists.

Every stage of an experiment loads its view only (:func:`lsnmt.runner.base.run_stage`); the whole file is loaded
here by the stages that read every experiment (``report``; ``params`` reads the papers' links) and by a test's toy
stage (:func:`run`).
"""

from __future__ import annotations

import argparse

from lsnmt.config import Experiment, Params
from lsnmt.runner.base import BUSY as BUSY
from lsnmt.runner.base import STOP_SIGNALS as STOP_SIGNALS
from lsnmt.runner.base import guarded as guarded
from lsnmt.runner.base import load_or_exit, parse_args
from lsnmt.runner.base import setup_logging as setup_logging
from lsnmt.runner.console import stage_clock as stage_clock


def stage_args(name: str, argv: list[str] | None = None, **extra: str) -> tuple[argparse.Namespace, Experiment]:
    """Parse ``--experiment/--params/--log`` (plus ``extra`` identity flags), load and validate params."""
    args = parse_args(name, argv, **extra)
    return args, load_or_exit(name, lambda: Params.load(args.params).get(args.experiment))


def run(name: str, fn, argv: list[str] | None = None) -> None:
    """Run ``fn(exp)`` for a stage that depends only on the experiment."""
    _args, exp = stage_args(name, argv)
    guarded(name, lambda: fn(exp), (exp.name, None))
