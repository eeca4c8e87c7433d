"""What every ``python -m stages.<name>`` entry point shares: identity arguments and logging.

Stages take only identity arguments (which experiment, where to log); every
hyperparameter comes from ``params.yaml``. Logging goes to stderr and, with
``--log``, to that file too (the path both front ends declare as the rule's log).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from lsnmt.config import Experiment, Params
from lsnmt.console import console_handler, stage_clock
from lsnmt.io import DataError, Interrupted
from lsnmt.typed import ConfigError


def setup_logging(log_file: str | None) -> None:
    """Log to stderr and ``log_file``. Under ``torchrun`` (``RANK`` set) only rank 0 writes the file, appending
    after the launcher's line; the other ranks log to stderr with their rank in the prefix. The file gets every
    line, stderr the console's (:mod:`lsnmt.console`: start, end, progress, each kind of warning once)."""
    rank = os.environ.get("RANK")
    handlers: list[logging.Handler] = [console_handler(sys.stderr)]
    if log_file and rank in (None, "0"):
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w" if rank is None else "a", encoding="utf-8"))
    prefix = "" if rank is None else f"[rank {rank}] "
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format=f"%(asctime)s %(levelname)s {prefix}%(name)s: %(message)s")
    logging.captureWarnings(True)  # a library's warnings are counted and summarised like the stage's own


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


def guarded(name: str, call, detail: str = "") -> None:
    """Run ``call()``; bad data or a diverged run is logged as one clear line and exits 1, a run stopped by
    SIGTERM / SIGUSR1 (its state saved: ``lsnmt.train.loop``) exits ``128 + signal``. Its start and end (with
    the wall time) are logged on the console (:func:`lsnmt.console.stage_clock`)."""
    try:
        with stage_clock(name, detail):
            call()
    except (DataError, FloatingPointError) as exc:
        logging.getLogger(f"stages.{name}").error("%s", exc)
        raise SystemExit(1) from None
    except Interrupted as exc:
        logging.getLogger(f"stages.{name}").warning("%s", exc)
        raise SystemExit(128 + exc.signum) from None


def run(name: str, fn, argv: list[str] | None = None) -> None:
    """Run ``fn(exp)`` for a stage that depends only on the experiment."""
    _args, exp = stage_args(name, argv)
    guarded(name, lambda: fn(exp), exp.name)


def run_method(name: str, fn, argv: list[str] | None = None) -> None:
    """Run ``fn(exp, method)`` for a stage keyed by experiment and method (``--method``)."""
    args, exp = stage_args(name, argv, method="method name (params.yaml `methods`)")
    methods = Params.load(args.params).methods_of(exp.name)
    if args.method not in methods:
        logging.getLogger(f"stages.{name}").error("method %r is not among the methods of experiment %r in %s %s",
                                                  args.method, exp.name, args.params, list(methods))
        raise SystemExit(2)
    guarded(name, lambda: fn(exp, args.method), f"{exp.name}, {args.method}")


def run_all_methods(name: str, fn, argv: list[str] | None = None) -> None:
    """Run ``fn(exp, methods)`` for a stage that compares every method of the experiment
    (:meth:`~lsnmt.config.Params.methods_of`)."""
    args, exp = stage_args(name, argv)
    methods = Params.load(args.params).methods_of(exp.name)
    guarded(name, lambda: fn(exp, methods), exp.name)


def run_tasks(name: str, fn, argv: list[str] | None = None) -> None:
    """Run ``fn(exp, tasks, task_methods)`` for the NER / QA stages: the experiment's ``tasks`` and
    ``task_methods`` (its own lists, else the top-level ones; ``Params.load`` has checked them)."""
    args, exp = stage_args(name, argv)
    params = Params.load(args.params)
    tasks, methods = params.jobs_of(exp.name, "tasks"), params.jobs_of(exp.name, "task_methods")
    guarded(name, lambda: fn(exp, tasks, methods), exp.name)


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
    guarded(name, lambda: fn(exp, value), f"{exp.name}, {value}")
