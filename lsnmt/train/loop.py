"""What every training loop shares: stop on SIGTERM / SIGUSR1 with a checkpoint, and the update loop of a
single-process job (:func:`run_updates`).

SIGTERM (SLURM preemption, ``scancel``, the time limit) or SIGUSR1 asks a run to stop. The loop finishes the
update in progress, writes the job's resumable state (``save``) unless the update just saved it, and raises
:class:`Interrupted`; the next call of the job resumes from there, bit for bit on CPU. A stage turns
:class:`Interrupted` into exit status ``128 + signal`` (``lsnmt.cli.guarded``), as a shell reports a signal.

The translation trainer (``lsnmt.train.trainer``: DDP, fp16 scaler, validation) uses :func:`stop_requests` and
:class:`Interrupted`; x-elm's LMs (``lsnmt.xelm.trainer``) run on :func:`run_updates`.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from tqdm import tqdm

from lsnmt.train.curve import Curve, Meters, log_line

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1)
"""Signals that make a run save its state and stop (SLURM sends SIGTERM before it kills a job)."""


class Interrupted(RuntimeError):
    """Training stopped on a signal after saving ``last.pt``; running again resumes."""

    def __init__(self, signum: int, step: int) -> None:
        super().__init__(
            f"stopped by {signal.Signals(signum).name} after update {step}; "
            "checkpoint saved, the next run resumes from it"
        )
        self.signum, self.step = signum, step


@contextmanager
def stop_requests() -> Iterator[list[int]]:
    """Catch :data:`STOP_SIGNALS` while training: the yielded list receives their numbers (handlers are
    restored on exit; outside the main thread nothing is caught)."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    previous = {sig: signal.signal(sig, lambda signum, _frame: caught.append(signum)) for sig in STOP_SIGNALS}
    try:
        yield caught
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass(frozen=True)
class Update:
    """What one update reports: summed loss and nll (nats) over ``ntokens`` target tokens, and its lr."""

    loss: float
    nll: float
    ntokens: int
    lr: float


@dataclass(frozen=True, kw_only=True)
class Job:
    """The hooks of a single-process training job for :func:`run_updates`."""

    name: str
    """Shown on the progress bar."""
    total: int
    """Updates to reach."""
    log_every: int
    """A log line and a curve row every ``log_every`` updates (and after the last)."""
    save_every: int
    """``save`` every ``save_every`` updates (and after the last)."""
    update: Callable[[int], Update]
    """Runs update ``n + 1`` given ``n`` done; raises ``FloatingPointError`` before a non-finite update."""
    save: Callable[[int], None]
    """Writes the resumable state after ``n`` updates (``work_dir/last.pt``)."""


def run_updates(job: Job, step: int, meters: Meters | None = None, curve: Curve | None = None) -> int:
    """Run ``job`` from ``step`` updates done to ``job.total``; returns the updates done.

    With ``meters`` and ``curve``, every ``log_every`` updates log one line and append one curve row (a job without
    them logs for itself, e.g. per epoch). Raises :class:`Interrupted` after SIGTERM / SIGUSR1 (state saved) unless
    the last update was the final one.
    """
    bar = tqdm(total=job.total, initial=step, desc=job.name, unit="update", disable=None)
    clock, seen = time.perf_counter(), 0
    with stop_requests() as caught:
        while step < job.total:
            res = job.update(step)
            step += 1
            seen += res.ntokens
            bar.update(1)
            final = step == job.total
            if meters is not None and curve is not None:
                meters.add(res.loss, res.nll, res.ntokens)
                if final or step % job.log_every == 0:
                    loss, nll = meters.bits()
                    log.info(log_line(step, job.total, loss, nll, res.lr, seen / (time.perf_counter() - clock)))
                    curve.append(step, loss, nll, res.lr, None)
                    meters.reset()
                    clock, seen = time.perf_counter(), 0
            periodic = final or step % job.save_every == 0
            if periodic:
                job.save(step)
            if caught and not final:
                if not periodic:
                    job.save(step)
                bar.close()
                raise Interrupted(caught[0], step)
    bar.close()
    return step
