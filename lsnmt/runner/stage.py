"""What every ``python -m stages.<name>`` entry point of a stage past the data shares: identity arguments, logging
and its guard (:mod:`lsnmt.runner.base`, re-exported here), and the whole typed params.yaml (``Params.load``:
every section checked), from which the stage takes its experiment and job lists.

The data stages load their view only (:func:`lsnmt.runner.base.run_stage`): they import no method, training
or x-elm schema, and editing one reruns none of them.
"""

from __future__ import annotations

import argparse
import logging

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


def run_method(name: str, fn, argv: list[str] | None = None) -> None:
    """Run ``fn(exp, method)`` for a stage keyed by experiment and method (``--method``)."""
    args, exp = stage_args(name, argv, method="method name (params.yaml `methods`)")
    methods = Params.load(args.params).methods_of(exp.name)
    if args.method not in methods:
        logging.getLogger(f"stages.{name}").error("method %r is not among the methods of experiment %r in %s %s",
                                                  args.method, exp.name, args.params, list(methods))
        raise SystemExit(2)
    guarded(name, lambda: fn(exp, args.method), (exp.name, args.method))


def run_all_methods(name: str, fn, argv: list[str] | None = None) -> None:
    """Run ``fn(exp, methods)`` for a stage that compares every method of the experiment
    (:meth:`~lsnmt.config.Params.methods_of`)."""
    args, exp = stage_args(name, argv)
    methods = Params.load(args.params).methods_of(exp.name)
    guarded(name, lambda: fn(exp, methods), (exp.name, None))


def run_tasks(name: str, fn, argv: list[str] | None = None) -> None:
    """Run ``fn(exp, tasks, task_methods)`` for the NER / QA stages: the experiment's ``tasks`` and
    ``task_methods`` (its own lists, else the top-level ones; ``Params.load`` has checked them)."""
    args, exp = stage_args(name, argv)
    params = Params.load(args.params)
    tasks, methods = params.jobs_of(exp.name, "tasks"), params.jobs_of(exp.name, "task_methods")
    guarded(name, lambda: fn(exp, tasks, methods), (exp.name, None))


def run_keyed(name: str, key: str, allowed: str, fn, argv: list[str] | None = None) -> None:
    """Run ``fn(exp, value)`` for a stage keyed by one identity argument ``--<key>`` whose value must be one of
    the experiment's job list ``allowed`` (:meth:`~lsnmt.config.Params.jobs_of`, e.g. ``--expert`` in
    ``xelm_experts``)."""
    args, exp = stage_args(name, argv, **{key: f"one of params.yaml `{allowed}`"})
    value = getattr(args, key)
    listed = Params.load(args.params).jobs_of(exp.name, allowed)
    if value not in listed:
        logging.getLogger(f"stages.{name}").error("%s %r is not among the %s of experiment %r in %s %s", key, value,
                                                  allowed, exp.name, args.params, list(listed))
        raise SystemExit(2)
    guarded(name, lambda: fn(exp, value), (exp.name, value))
