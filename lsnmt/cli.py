"""What every ``python -m stages.<name>`` entry point shares: identity arguments and logging.

Stages take only identity arguments (which experiment, where to log); every
hyperparameter comes from ``params.yaml``. Logging goes to stderr and, with
``--log``, to that file too (the path both front ends declare as the rule's log).
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from lsnmt.config import Experiment, Params
from lsnmt.typed import ConfigError


def setup_logging(log_file: str | None) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler(sys.stderr)]
    if log_file:
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w", encoding="utf-8"))
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def stage_args(name: str, argv: list[str] | None = None, **extra: str) -> tuple[argparse.Namespace, Experiment]:
    """Parse ``--experiment/--params/--log`` (plus ``extra`` identity flags), load and validate params."""
    parser = argparse.ArgumentParser(prog=f"python -m stages.{name}")
    parser.add_argument("--experiment", default=None, help="experiment name (default: params.yaml's `experiment`)")
    parser.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    parser.add_argument("--log", default=None, help="also write the log to this file")
    for flag, help_ in extra.items():
        parser.add_argument(f"--{flag}", required=True, help=help_)
    args = parser.parse_args(argv)
    setup_logging(args.log)
    try:
        exp = Params.load(args.params).get(args.experiment)
    except ConfigError as exc:
        logging.getLogger(f"stages.{name}").error("%s", exc)
        raise SystemExit(2) from None
    return args, exp


def guarded(name: str, call) -> None:  # noqa: ANN001
    """Run ``call()``; bad data or a diverged run is logged as one clear line and exits 1."""
    from lsnmt.io import DataError

    try:
        call()
    except (DataError, FloatingPointError) as exc:
        logging.getLogger(f"stages.{name}").error("%s", exc)
        raise SystemExit(1) from None


def run(name: str, fn, argv: list[str] | None = None) -> None:  # noqa: ANN001
    """Run ``fn(exp)`` for a stage that depends only on the experiment."""
    _args, exp = stage_args(name, argv)
    guarded(name, lambda: fn(exp))


def run_method(name: str, fn, argv: list[str] | None = None) -> None:  # noqa: ANN001
    """Run ``fn(exp, method)`` for a stage keyed by experiment and method (``--method``)."""
    args, exp = stage_args(name, argv, method="method name (params.yaml `methods`)")
    params = Params.load(args.params)
    if args.method not in params.methods:
        logging.getLogger(f"stages.{name}").error("method %r is not listed in %s `methods` %s", args.method,
                                                  args.params, list(params.methods))
        raise SystemExit(2)
    guarded(name, lambda: fn(exp, args.method))


def run_all_methods(name: str, fn, argv: list[str] | None = None) -> None:  # noqa: ANN001
    """Run ``fn(exp, methods)`` for a stage that compares every method of params.yaml's ``methods``."""
    args, exp = stage_args(name, argv)
    methods = Params.load(args.params).methods
    guarded(name, lambda: fn(exp, methods))


def run_tasks(name: str, fn, argv: list[str] | None = None) -> None:  # noqa: ANN001
    """Run ``fn(exp, tasks, task_methods)`` for the NER / QA stages (params.yaml's ``tasks`` and ``task_methods``,
    checked against the experiment given with ``--experiment``)."""
    args, exp = stage_args(name, argv)
    params = Params.load(args.params)
    log = logging.getLogger(f"stages.{name}")
    for i, task in enumerate(params.tasks):
        if task not in exp.task_cfg:
            log.error("tasks[%d]: %r is not defined under experiments.%s.task_cfg (known: %s)", i, task, exp.name,
                      ", ".join(exp.task_cfg) or "none")
            raise SystemExit(2)
    for i, method in enumerate(params.task_methods):
        if method != "naive" and method not in exp.task_method_cfg:
            log.error("task_methods[%d]: %r is neither naive nor defined under experiments.%s.task_method_cfg", i,
                      method, exp.name)
            raise SystemExit(2)
    guarded(name, lambda: fn(exp, params.tasks, params.task_methods))


def run_keyed(name: str, key: str, allowed: str, fn, argv: list[str] | None = None) -> None:  # noqa: ANN001
    """Run ``fn(exp, value)`` for a stage keyed by one identity argument ``--<key>`` whose value must be listed
    in params.yaml's top-level list ``allowed`` (e.g. ``--expert`` in ``xelm_experts``)."""
    args, exp = stage_args(name, argv, **{key: f"one of params.yaml `{allowed}`"})
    value = getattr(args, key)
    listed = getattr(Params.load(args.params), allowed)
    if value not in listed:
        logging.getLogger(f"stages.{name}").error("%s %r is not listed in %s `%s` %s", key, value, args.params,
                                                  allowed, list(listed))
        raise SystemExit(2)
    guarded(name, lambda: fn(exp, value))
