"""The stage runner's core: identity arguments, logging, the guard around a stage's work (:func:`guarded`), and
:func:`run_stage`, the entry of a stage that reads its view of params.yaml (:mod:`lsnmt.view`: the sections it
uses, nothing else), so that its code dependencies hold no schema it does not read. The stages not yet on views
load the whole typed params.yaml on top of it (:mod:`lsnmt.experiment.stage`).

Stages take only identity arguments (which experiment, where to log); every
hyperparameter comes from ``params.yaml``. Logging goes to stderr and, with
``--log``, to that file too (the path both front ends declare as the rule's log).

A stage's work (:func:`guarded`) ends in one line and an exit status on every expected failure: bad data, a
damaged file or a full disk (:class:`~lsnmt.io.DataError`), a diverged run and an allocation larger than the
machine (a size in params.yaml beyond it: params.yaml's ranges refuse only the sizes no machine holds) exit 1;
the same job already running in this repository (:mod:`lsnmt.runner.lock`) exits 75 (``EX_TEMPFAIL``); a
setting found wrong where it is used (:class:`~lsnmt.typed.ConfigError`: a method entry the stage types) exits 2,
as one found at load; SIGTERM or
SIGUSR1 exits 128 + the signal (143 for SIGTERM), wherever it arrives: inside a training loop's updates the loop
saves and stops (:class:`~lsnmt.stops.Interrupted`), anywhere else (set-up, evaluation, between NER / QA units) the
stage's handler stops it (:class:`~lsnmt.stops.StopSignal`).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from lsnmt.io import FULL, DataError, DiskFull
from lsnmt.runner import lock
from lsnmt.runner.console import console_handler, stage_clock
from lsnmt.stops import Interrupted, OutOfMemory, StopSignal, pending_stop
from lsnmt.typed import ConfigError
from lsnmt.view import job_list, load_view

T = TypeVar("T")
V = TypeVar("V")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1)
"""What stops a stage cleanly (the training loop's own: ``lsnmt.train.loop.STOP_SIGNALS``)."""
BUSY = 75
"""Exit status of a stage whose job is already running (``EX_TEMPFAIL``: try again later)."""


def setup_logging(log_file: str | None) -> None:
    """Log to stderr and ``log_file``. Under ``torchrun`` (``RANK`` set) only rank 0 writes the file, appending
    after the launcher's line; the other ranks log to stderr with their rank in the prefix. The file gets every
    line, stderr the console's (:mod:`lsnmt.runner.console`: start, end, progress, each kind of warning once)."""
    rank = os.environ.get("RANK")
    handlers: list[logging.Handler] = [console_handler(sys.stderr)]
    if log_file and rank in (None, "0"):
        Path(log_file).parent.mkdir(parents=True, exist_ok=True)
        handlers.append(logging.FileHandler(log_file, mode="w" if rank is None else "a", encoding="utf-8"))
    prefix = "" if rank is None else f"[rank {rank}] "
    logging.basicConfig(level=logging.INFO, handlers=handlers, force=True,
                        format=f"%(asctime)s %(levelname)s {prefix}%(name)s: %(message)s")
    logging.captureWarnings(True)  # a library's warnings are counted and summarised like the stage's own


def parse_args(name: str, argv: list[str] | None = None, **extra: str) -> argparse.Namespace:
    """Parse ``--experiment/--params/--log`` (plus ``extra`` identity flags) and set up logging."""
    parser = argparse.ArgumentParser(prog=f"python -m stages.{name}")
    parser.add_argument("--experiment", default=None, help="experiment name (default: params.yaml's `experiment`)")
    parser.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    parser.add_argument("--log", default=None, help="also write the log to this file")
    for flag, help_ in extra.items():
        parser.add_argument(f"--{flag}", required=True, help=help_)
    args = parser.parse_args(argv)
    setup_logging(args.log)
    return args


def load_or_exit(name: str, load: Callable[[], T]) -> T:
    """``load()`` (params.yaml, typed); a :class:`~lsnmt.typed.ConfigError` is one logged line and exit 2."""
    try:
        return load()
    except ConfigError as exc:
        logging.getLogger(f"stages.{name}").error("%s", exc)
        raise SystemExit(2) from None


@dataclass(frozen=True)
class Job:
    """Who a stage runs for: the experiment, the job lists it asked for (``tasks``, ...) and, for a stage run once per
    item (``--method``, ``--expert``, ``--target``), that item."""

    experiment: str
    lists: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    item: str | None = None


@dataclass(frozen=True)
class Each:
    """A stage run once per item: the identity flag ``--<flag>`` and the items it may take, ``allowed(path,
    experiment, view)`` (the file, to read a job list: :func:`lsnmt.view.job_list`), named ``where`` in the error."""

    flag: str
    where: str
    allowed: Callable[[str, str, Any], Iterable[str]]


def run_stage(name: str, view: type[V], fn: Callable[[V, Job], object], argv: list[str] | None = None, *,
              lists: tuple[str, ...] = (), each: Each | None = None) -> None:
    """The entry of stage ``name``: parse ``--experiment/--params/--log`` (and ``--<each.flag>``), load ``view`` of the
    experiment (the keys the stage reads: :func:`lsnmt.view.load_view`) and the job ``lists``
    (:func:`lsnmt.view.job_list`), one line naming the file and key on an error (exit 2, as an item not among
    ``each.allowed``), then run ``fn(view, job)`` guarded. The stage hands sections or flat values on from there."""
    extra = {each.flag: f"one of params.yaml `{each.where}`"} if each else {}
    args = parse_args(name, argv, **extra)
    item: str | None = getattr(args, each.flag) if each else None
    fill = {each.flag: item} if each and item is not None else None  # a key with its wildcard: method_cfg.{method}
    exp, cfg = load_or_exit(name, lambda: load_view(args.params, args.experiment, view, fill))
    jobs = load_or_exit(name, lambda: {key: job_list(args.params, exp, key) for key in lists})
    if each is not None:
        allowed = tuple(load_or_exit(name, lambda: tuple(each.allowed(args.params, exp, cfg))))
        if item not in allowed:
            logging.getLogger(f"stages.{name}").error("%s %r is not among the %s of experiment %r in %s %s",
                                                      each.flag, item, each.where, exp, args.params, list(allowed))
            raise SystemExit(2)
    guarded(name, lambda: fn(cfg, Job(exp, jobs, item)), (exp, item))


def guarded(name: str, call, job: tuple[str, str | None] | None = None) -> None:
    """Run ``call()`` as the stage ``name`` (module docstring: one line and an exit status on each expected
    failure). ``job``: ``(experiment, job name or None)``, whose lock (:mod:`lsnmt.runner.lock`) the stage holds while
    it runs (a rank of a multi-rank run takes none: its launcher holds it). Its start and end (with the wall
    time) are logged on the console (:func:`lsnmt.runner.console.stage_clock`)."""
    logger = logging.getLogger(f"stages.{name}")
    detail = ", ".join(x for x in job if x) if job else ""
    try:
        with stage_clock(name, detail), _job_lock(name, job), _stop_handlers():
            call()
    except (Interrupted, StopSignal) as exc:  # before RuntimeError: Interrupted is one
        logger.warning("%s", exc)
        raise SystemExit(128 + exc.signum) from None
    except (DataError, FloatingPointError, OutOfMemory) as exc:
        logger.error("%s", exc)
        raise SystemExit(1) from None
    except OSError as exc:
        if exc.errno not in FULL:
            raise
        logger.error("%s", DiskFull.at(exc.filename or Path.cwd() / "?"))
        raise SystemExit(1) from None
    except lock.Busy as exc:
        logger.error("%s", exc)
        raise SystemExit(BUSY) from None
    except ConfigError as exc:  # a setting typed where the stage uses it (a method entry): as at load, exit 2
        logger.error("%s", exc)
        raise SystemExit(2) from None
    except (MemoryError, RuntimeError) as exc:
        if not _out_of_memory(exc):
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        logger.error("out of memory (%s): a size in params.yaml is too large for this machine", first[:200])
        raise SystemExit(1) from None


def _out_of_memory(exc: BaseException) -> bool:
    """numpy's failed allocation (a ``MemoryError``), torch's on the CPU or a GPU (a ``RuntimeError``)."""
    return (isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError"
            or "can't allocate memory" in str(exc))


@contextlib.contextmanager
def _job_lock(name: str, job: tuple[str, str | None] | None) -> Iterator[None]:
    if job is None or "WORLD_SIZE" in os.environ:
        yield
        return
    exp, item = job
    fd = lock.acquire(lock.path_of(name, exp, item), f"{name} {' '.join(x for x in (exp, item) if x)}")
    try:
        yield
    finally:
        lock.release(fd)


@contextlib.contextmanager
def _stop_handlers() -> Iterator[None]:
    """SIGTERM / SIGUSR1 raise :class:`~lsnmt.stops.StopSignal` (a training loop catches them itself while it runs
    and puts this handler back after), as does one that came earlier (``stages/__init__.py`` notes them from the
    stage's start: :func:`~lsnmt.stops.note_stop_signals`); outside the main thread nothing is installed."""
    def stop(signum: int, _frame: object) -> None:
        raise StopSignal(signum)

    try:
        previous = {sig: signal.signal(sig, stop) for sig in STOP_SIGNALS}
    except ValueError:  # not the main thread
        yield
        return
    try:
        if signum := pending_stop():  # it came during the imports or the loading of params.yaml
            raise StopSignal(signum)
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
