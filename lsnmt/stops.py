"""How a run stops: on a signal (SIGTERM / SIGUSR1, as SLURM sends before a preemption) or out of device memory.

A training loop saves ``last.pt`` and raises :class:`Interrupted`; anywhere else a stage's handler raises
:class:`StopSignal`; an update that does not fit raises :class:`OutOfMemory`. A stage turns each into one line and
its exit status (``lsnmt.runner.base.guarded``). Signals that arrive during a stage's imports, before its handler
is installed, are noted (:func:`note_stop_signals`) and stop it as soon as the handler is up (:func:`pending_stop`).
"""

from __future__ import annotations

import signal


class Interrupted(RuntimeError):
    """Training stopped on a signal after saving ``last.pt``; running again resumes (``lsnmt.train.loop``; a stage
    exits ``128 + signal``: ``lsnmt.runner.base.guarded``)."""

    def __init__(self, signum: int, step: int) -> None:
        super().__init__(
            f"stopped by {signal.Signals(signum).name} after update {step}; "
            "checkpoint saved, the next run resumes from it"
        )
        self.signum, self.step = signum, step


class OutOfMemory(MemoryError):
    """An update did not fit in the device's memory: one line naming the update, its batch and the setting to lower
    (``lsnmt.train.faults``); a stage prints it whole and exits 1 (``lsnmt.runner.base.guarded``)."""


class StopSignal(BaseException):
    """SIGTERM / SIGUSR1 outside a training loop's updates (set-up, evaluation, between units): raised by the
    stage's handler (``lsnmt.runner.base.guarded``); a ``BaseException``, so that no ``except Exception`` takes
    it for an error of the code it interrupts."""

    def __init__(self, signum: int) -> None:
        super().__init__(
            f"stopped by {signal.Signals(signum).name} outside the updates (set-up, evaluation or "
            "between units); nothing half-written is kept, the next run resumes from the last checkpoint"
        )
        self.signum = signum


_EARLY: list[int] = []
"""Stop signals that arrived before the stage's handler was installed (:func:`note_stop_signals`)."""


def note_stop_signals() -> None:
    """Record SIGTERM / SIGUSR1 from a stage's very start (its imports take seconds: torch) until its handler
    takes over (``lsnmt.runner.base.guarded``), which then stops at once (:func:`pending_stop`)."""
    for sig in (signal.SIGTERM, signal.SIGUSR1):
        signal.signal(sig, lambda signum, _frame: _EARLY.append(signum))


def pending_stop() -> int:
    """The first stop signal :func:`note_stop_signals` recorded (0: none)."""
    return _EARLY[0] if _EARLY else 0
