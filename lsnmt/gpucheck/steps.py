"""Each step of the check a subprocess under a time budget it cannot overrun, the budgets drawn from one ledger.

A step's budget is printed before it starts; the step is killed (its whole process group) when the budget is
spent, and its outcome kept: ``ok``, ``failed (rc N)``, ``timed out`` or ``skipped: <why>``. A failed step does not
stop the others; a step whose input a failed one should have made is skipped, saying which.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

OK = "ok"


@dataclass(frozen=True)
class Outcome:
    name: str
    status: str
    seconds: float = 0.0
    budget: float = 0.0
    detail: str = ""
    """A line worth reading (the log's last, a figure, why it was skipped)."""

    @property
    def ok(self) -> bool:
        return self.status == OK


class Ledger:
    """The check's clock: what is left of ``total`` seconds, and each step's share of it. ``say`` prints a line
    (one at a time: steps running at once announce themselves from several threads)."""

    def __init__(self, total: float, say: Callable[[str], None] | None = None) -> None:
        self.start, self.total, self._say, self._lock = time.monotonic(), total, say, threading.Lock()

    def say(self, line: str) -> None:
        with self._lock:
            if self._say is not None:
                self._say(line)
            else:
                sys.stdout.write(line + "\n")
                sys.stdout.flush()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def left(self) -> float:
        return self.total - self.elapsed()

    def budget(self, cap: float, reserve: float = 0.0) -> float:
        """``cap`` seconds, or what is left once ``reserve`` is kept for later steps (at least 1 s)."""
        return max(1.0, min(cap, self.left() - reserve))

    def announce(self, name: str, budget: float, note: str = "") -> None:
        self.say(f"[{self.elapsed():4.0f} s of {self.total:.0f}] {name}: budget {budget:.0f} s{note}")

    def done(self, out: Outcome) -> Outcome:
        detail = f" ({out.detail})" if out.detail and not out.ok else ""
        took = "" if out.status.startswith("skipped") else f" in {out.seconds:.0f} s"
        self.say(f"[{self.elapsed():4.0f} s of {self.total:.0f}] {out.name}: {out.status}{took}{detail}")
        return out


def child_env(cpu: bool) -> dict[str, str]:
    """The environment of a step: the repository importable from anywhere (stages run in the check's own folder),
    unbuffered output, and on the CPU plan no GPU at all and one thread."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    if cpu:  # no GPU, and one thread per library: tiny work on many threads spin-waits on a shared CPU
        env.update(CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return env


def start(cmd: Sequence[str], log: Path, cwd: Path, env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    """``cmd`` in its own process group, stdout and stderr appended to ``log``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as fh:
        fh.write(f"$ {' '.join(cmd)}\n".encode())
        fh.flush()
        return subprocess.Popen(
            list(cmd), cwd=cwd, env=dict(env), stdout=fh, stderr=subprocess.STDOUT, start_new_session=True
        )


def kill(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    """Send ``sig`` to ``proc``'s process group (the step and whatever it started)."""
    try:
        os.killpg(proc.pid, sig)
    except ProcessLookupError:
        pass


def run(
    ledger: Ledger, name: str, cmd: Sequence[str], budget: float, log: Path, cwd: Path, env: Mapping[str, str]
) -> Outcome:
    """Run one step within ``budget`` seconds (announced first); its outcome, the log's last line as detail."""
    ledger.announce(name, budget)
    began = time.monotonic()
    proc = start(cmd, log, cwd, env)
    try:
        rc = proc.wait(timeout=budget)
        status = OK if rc == 0 else f"failed (rc {rc})"
    except subprocess.TimeoutExpired:
        kill(proc)
        proc.wait()
        status = f"timed out (killed at its {budget:.0f} s budget)"
    return ledger.done(Outcome(name, status, time.monotonic() - began, budget, last_line(log)))


def skipped(ledger: Ledger, name: str, why: str) -> Outcome:
    return ledger.done(Outcome(name, f"skipped: {why}"))


def last_line(log: Path) -> str:
    lines = [x for x in log.read_text(encoding="utf-8", errors="replace").splitlines() if x.strip()]
    return lines[-1].strip()[:200] if lines else ""


def python() -> str:
    """The interpreter the check runs under (a cluster's CUDA torch is used as is)."""
    return sys.executable
