"""The one update loop of every training job (:func:`run_updates`): translation (``lsnmt.train.trainer``),
x-elm's LMs (``lsnmt.xelm.trainer``) and the XLM-R tasks (``lsnmt.tasks.train``), whose updates are the one update
step, :func:`lsnmt.train.update.update` (AMP, DDP, clipping, the optimizer step).

A job is a set of hooks (:class:`Job`): ``update(n)`` runs update ``n + 1`` (its data stream, its step function)
and reports an :class:`Update`; ``save`` writes the resumable state; ``validate`` (optional) evaluates. The loop
counts updates, logs, writes the curve, validates, saves and stops; the job owns its model, optimizer and data.

**No host sync per update.** An update's loss, nll and gradient norm may stay on the device: the loop keeps the
reports since its last *check* and reads them in one copy at the next one. A check comes every ``log_every``
updates, before every validation and save, and after the last update.

**NaN guard.** A check raises ``FloatingPointError`` naming the first update whose loss, nll or gradient norm is
not finite. Every save follows a check, so no checkpoint holds the weights of (or after) a non-finite update; the
run resumes from the last good ``last.pt``. The updates between the bad one and the check (fewer than
``log_every``) are computed and thrown away.

**Skipped updates** (fp16: the gradient scaler found an overflow, a non-finite loss included, and did not step)
are not counted: the loop asks for update ``n + 1`` again (the job has consumed that update's batches, as fairseq
does) and logs how many it skipped since its last line. fp16 training stops once the loss scale falls below
fairseq's minimum (:mod:`lsnmt.train.faults`).

**Out of memory.** ``torch.OutOfMemoryError`` in an update stops the run with one line
(:class:`~lsnmt.train.faults.OutOfMemory`)
naming the update, its batch and the setting to lower (``Job.describe_batch``); nothing is saved, so the last
checkpoint is kept and a rerun resumes from it.

**Stop signals.** SIGTERM (SLURM preemption, ``scancel``, the time limit) or SIGUSR1 asks a run to stop. The loop
finishes the update in progress, all ranks agree on the signal (``Job.agree``: one scalar all-reduce per update
with several ranks), the main rank writes the resumable state (``save(n, periodic=False, improved=False)``)
unless the update just saved it, and every rank raises :class:`Interrupted`; the next call resumes from there,
bit for bit on CPU. A stage turns :class:`Interrupted` into exit status ``128 + signal``
(``lsnmt.runner.base.guarded``).

**Several ranks** (``torchrun``): every rank runs the loop; reports are summed over ranks by the step function,
so every rank's check sees the same values; only the main rank logs, writes the curve and saves.
"""

from __future__ import annotations

import logging
import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

import torch
from torch import Tensor

from lsnmt.runner.progress import Progress
from lsnmt.stops import Interrupted
from lsnmt.train.curve import Curve, Meters, log_line
from lsnmt.train.faults import out_of_memory, skipped_line
from lsnmt.train.loss import LOG2

log = logging.getLogger(__name__)

STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1)
"""Signals that make a run save its state and stop (SLURM sends SIGTERM before it kills a job)."""


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


Number = float | Tensor
"""A host float or a 0-dim tensor that may live on the device (read at the loop's next check)."""


@dataclass(frozen=True)
class Update:
    """What one update reports: summed loss and nll (nats) over ``ntokens`` target tokens, its lr and the global
    gradient norm (before clipping); ``skipped``: the fp16 scaler skipped the step (not counted)."""

    loss: Number
    nll: Number
    ntokens: int
    lr: float
    grad_norm: Number = 0.0
    skipped: bool = False


@dataclass(frozen=True)
class Validation:
    """What ``Job.validate`` reports: the mean validation loss (bits), whether it is the best so far (the main
    rank then saves ``best``), and a log line (logged after the training line)."""

    loss: float
    improved: bool
    line: str = ""


class SaveHook(Protocol):
    def __call__(self, step: int, *, periodic: bool, improved: bool) -> None:
        """Write the resumable state after ``step`` updates: ``periodic`` (every ``save_every`` and the last)
        or for a stop (both false); ``improved``: the validation of this step is the best so far."""


def no_agreement(caught: list[int]) -> int:
    """One process: the first signal caught (0: none)."""
    return caught[0] if caught else 0


def no_barrier() -> None:
    """One process: nothing to wait for."""


@dataclass(frozen=True, kw_only=True)
class Job:
    """The hooks of a training job for :func:`run_updates`."""

    name: str
    """Names the progress (a bar on a terminal, else a line at a fixed interval: :mod:`lsnmt.runner.progress`)."""
    total: int
    """Updates to reach."""
    log_every: int
    """A log line and a curve row every ``log_every`` updates (and at every validation and after the last)."""
    save_every: int
    """``save`` every ``save_every`` updates (and after the last)."""
    update: Callable[[int], Update]
    """Runs update ``n + 1`` given ``n`` done."""
    save: SaveHook
    validate: Callable[[int], Validation] | None = None
    """Evaluates after ``n`` updates, every ``validate_every`` updates and after the last."""
    validate_every: int = 0
    logger: logging.Logger = log
    """Where the training lines go (the job's module, so that its log names it)."""
    is_main: bool = True
    """This rank logs, writes the curve and saves (rank 0)."""
    agree: Callable[[list[int]], int] = no_agreement
    """The signal every rank stops on (0: none), from this rank's caught signals."""
    barrier: Callable[[], None] = no_barrier
    """Waits for every rank (after a stop's save)."""
    describe_batch: Callable[[], str] | None = None
    """The batch of the update in progress and the setting that sizes it, for an out-of-memory error."""

    def __post_init__(self) -> None:
        every = {"log_every": self.log_every, "save_every": self.save_every}
        if self.validate is not None:
            every["validate_every"] = self.validate_every
        for key, value in every.items():
            if value < 1:
                raise ValueError(f"{self.name}: {key} must be >= 1, got {value}")


def _values(pending: list[Update], with_grad: bool = True) -> list[list[float]]:
    """``[loss, nll(, grad_norm)]`` of each update as floats, read from the device in one copy."""
    fields = [(u.loss, u.nll, u.grad_norm)[: 3 if with_grad else 2] for u in pending]
    tensors = [x.detach().double().reshape(()) for row in fields for x in row if isinstance(x, Tensor)]
    read = iter(torch.stack(tensors).tolist() if tensors else [])
    return [[next(read) if isinstance(x, Tensor) else float(x) for x in row] for row in fields]


def check_finite(first: int, pending: list[Update], with_grad: bool = True) -> list[list[float]]:
    """The NaN guard over updates ``first, first + 1, …`` (see the module docstring); returns their values."""
    values = _values(pending, with_grad)
    for n, (u, row) in enumerate(zip(pending, values, strict=True), start=first):
        loss, nll = row[0], row[1]
        if not (math.isfinite(loss) and math.isfinite(nll)):
            raise FloatingPointError(
                f"step {n}: training loss is {loss / max(u.ntokens, 1) / LOG2} (non-finite); "
                f"stopped, no checkpoint written for it or any later update"
            )
        if with_grad and not math.isfinite(row[2]):
            raise FloatingPointError(
                f"step {n}: gradient norm is {row[2]} (loss {loss / max(u.ntokens, 1) / LOG2:.3f}); "
                f"stopped, no checkpoint written for it or any later update"
            )
    return values


class _Reports:
    """The updates since the last check, the running meters and the log line's clock."""

    def __init__(self, meters: Meters | None, step: int) -> None:
        self.meters = meters
        self.pending: list[Update] = []
        self.clock, self.seen = time.perf_counter(), 0
        self.skipped, self.since = 0, step
        """Updates skipped (fp16) since the last log line, which followed update ``since``."""
        self.saved: int | None = step or None
        """The update the newest checkpoint holds (``None``: none yet)."""

    def add(self, res: Update) -> None:
        self.pending.append(res)
        self.seen += res.ntokens

    def check(self, step: int) -> None:
        """Read and guard the pending updates (the last is update ``step``); add them to the meters."""
        values = check_finite(step - len(self.pending) + 1, self.pending)
        if self.meters is not None:
            for u, (loss, nll, _) in zip(self.pending, values, strict=True):
                self.meters.add(loss, nll, u.ntokens)
        self.pending = []

    def tok_s(self) -> float:
        rate = self.seen / max(time.perf_counter() - self.clock, 1e-9)
        self.clock, self.seen = time.perf_counter(), 0
        return rate


def run_updates(job: Job, step: int, meters: Meters | None = None, curve: Curve | None = None) -> int:
    """Run ``job`` from ``step`` updates done to ``job.total``; returns the updates done.

    With ``meters`` (and on the main rank ``curve``), a log line and a curve row every ``log_every`` updates, at
    every validation and after the last (a job without them logs for itself, e.g. per epoch). Raises
    ``FloatingPointError`` (NaN guard) and :class:`Interrupted` after SIGTERM / SIGUSR1 (state saved) unless the
    last update was the final one.
    """
    bar = Progress(job.total, job.name, "update", initial=step, logger=job.logger, enabled=job.is_main)
    reports = _Reports(meters, step)
    try:
        with stop_requests() as caught:
            while step < job.total:
                res = _update(job, step, reports)
                if res.skipped:
                    reports.skipped += 1
                    continue
                step += 1
                reports.add(res)
                bar.update(1)
                _after_update(job, step, res, reports, curve, caught)
    finally:
        bar.close()
    return step


def _update(job: Job, step: int, reports: _Reports) -> Update:
    """``job.update(step)``; out of device memory, the one-line :class:`~lsnmt.train.faults.OutOfMemory` instead
    (nothing saved)."""
    try:
        return job.update(step)
    except torch.OutOfMemoryError as exc:
        batch = job.describe_batch() if job.describe_batch is not None else f"the batch of {job.name}"
        raise out_of_memory(step + 1, batch, reports.saved, exc) from None


def _after_update(job: Job, step: int, res: Update, reports: _Reports, curve: Curve | None, caught: list[int]) -> None:
    """Validation, the log line and curve row, saves and the stop of update ``step``."""
    final = step == job.total
    valid = None
    if job.validate is not None and (final or step % job.validate_every == 0):
        reports.check(step)
        valid = job.validate(step)
    if reports.meters is not None and (final or valid is not None or step % job.log_every == 0):
        reports.check(step)
        loss, nll = reports.meters.bits()
        if job.is_main:
            job.logger.info(log_line(step, job.total, loss, nll, res.lr, reports.tok_s()))
            if reports.skipped:
                job.logger.info("%s", skipped_line(reports.skipped, reports.since))
            if valid is not None and valid.line:
                job.logger.info("%s", valid.line)
            if curve is not None:
                curve.append(step, loss, nll, res.lr, None if valid is None else valid.loss)
        reports.meters.reset()
        reports.skipped, reports.since = 0, step
    periodic = final or step % job.save_every == 0
    improved = valid is not None and valid.improved
    if periodic or improved:
        reports.check(step)
        if job.is_main:
            job.save(step, periodic=periodic, improved=improved)
        reports.saved = step if periodic else reports.saved
    if not final and (signum := job.agree(caught)):
        reports.check(step)
        if job.is_main and not periodic:
            job.save(step, periodic=False, improved=False)
        job.barrier()
        raise Interrupted(signum, step)
