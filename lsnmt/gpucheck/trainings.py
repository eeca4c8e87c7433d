"""Trainings in a time-box: started together, stopped together once the box is spent, finished where they stopped.

A training that reaches its ``train.max_steps`` inside its box simply finishes. One that would not is sized to fit
by its own measured rate: when the box is spent (and each training of the group has logged
:attr:`~lsnmt.gpucheck.plan.Plan.min_lines` step lines), the check sends SIGTERM; the trainer finishes the update
in progress, saves ``last.pt`` and exits 143 (``lsnmt.train.trainer``); the ``finish`` step then runs the train
stage again with ``max_steps`` set to the update it stopped after, which the trainer resumes across
(``lsnmt.train.trainer.NO_EFFECT``), and it writes ``model.pt`` as a training of that length would (the first
``k`` updates of the full run: the learning rate's schedule does not depend on ``max_steps``). A training still
without its lines ``grace`` seconds after its box, or one that does not stop, is killed: ``timed out``.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from lsnmt.gpucheck import steps, trainlog
from lsnmt.gpucheck.plan import EXPERIMENT


@dataclass
class Training:
    method: str
    log: Path
    """The stage's own log (``--log``: timestamped lines)."""
    proc: subprocess.Popen[bytes]
    sent_stop: bool = False
    killed: bool = False

    def read(self) -> trainlog.TrainLog:
        return trainlog.read(self.log)


def command(params: Path, method: str, log: Path) -> list[str]:
    return [
        steps.python(),
        "-m",
        "stages.train",
        "--params",
        str(params),
        "--experiment",
        EXPERIMENT,
        "--method",
        method,
        "--log",
        str(log),
    ]


def start(
    methods: Sequence[str], params: Path, cwd: Path, out: Path, tag: str, env: Mapping[str, str]
) -> list[Training]:
    """The train stage of each of ``methods`` at once, logs ``out/train_<tag>_<method>.log`` (console ``.out``)."""
    group = []
    for m in methods:
        log = out / f"train_{tag}_{m}.log"
        group.append(Training(m, log, steps.start(command(params, m, log), log.with_suffix(".out"), cwd, env)))
    return group


STOP_WAIT = 10.0
"""Seconds a training has to save and exit after SIGTERM before it is killed."""


def watch(group: Sequence[Training], box: float, grace: float, min_lines: int, poll: float = 0.25) -> None:
    """Wait for ``group``. Once ``box`` seconds have passed and each training still running has logged
    ``min_lines`` step lines, stop them all (SIGTERM: each saves and exits). ``grace`` seconds after the box, stop
    those that have logged a step line at all and kill those that have not (still setting up: nothing to save);
    kill what still runs :data:`STOP_WAIT` seconds after that."""
    began = time.monotonic()
    while any(t.proc.poll() is None for t in group):
        spent = time.monotonic() - began
        running = [t for t in group if t.proc.poll() is None]
        late = spent >= box + grace
        if spent >= box + grace + STOP_WAIT or (late and any(not t.read().points for t in running)):
            for t in (x for x in running if spent >= box + grace + STOP_WAIT or not x.read().points):
                steps.kill(t.proc)
                t.killed = True
        if late or (spent >= box and all(len(t.read().points) >= min_lines for t in running)):
            for t in running:
                if not t.sent_stop and not t.killed:
                    steps.kill(t.proc, signal.SIGTERM)
                    t.sent_stop = True
        time.sleep(poll)
    for t in group:
        t.proc.wait()


def outcome(t: Training, seconds: float, box: float) -> steps.Outcome:
    """``ok`` (trained to its max_steps), ``stopped at its box`` (saved: to be finished), or what went wrong."""
    log, rc = t.read(), t.proc.returncode
    name = f"train {t.method}"
    if t.killed:
        return steps.Outcome(
            name, "timed out (killed after its box and grace)", seconds, box, f"{len(log.points)} step lines"
        )
    if rc == 0:
        return steps.Outcome(name, steps.OK, seconds, box, f"{log.reached} updates")
    if rc == 128 + signal.SIGTERM and t.sent_stop:
        return steps.Outcome(name, "stopped at its box", seconds, box, f"after update {log.reached}")
    return steps.Outcome(name, f"failed (rc {rc})", seconds, box, steps.last_line(t.log.with_suffix(".out")))


def run_group(
    ledger: steps.Ledger,
    tag: str,
    methods: Sequence[str],
    params: Path,
    cwd: Path,
    out: Path,
    box: float,
    grace: float,
    min_lines: int,
    env: Mapping[str, str],
) -> list[tuple[Training, steps.Outcome]]:
    """Train ``methods`` together in a ``box``-second time-box (announced first); each one's outcome."""
    ledger.announce(f"train {tag}: {', '.join(methods)}", box, f" (a time-box; then SIGTERM, {grace:.0f} s to stop)")
    began = time.monotonic()
    group = start(methods, params, cwd, out, tag, env)
    watch(group, box, grace, min_lines)
    seconds = time.monotonic() - began
    return [(t, ledger.done(outcome(t, seconds, box))) for t in group]
