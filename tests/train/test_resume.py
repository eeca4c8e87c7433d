"""SIGKILL a training process after a checkpoint; the resumed run must end bitwise where an uninterrupted one does."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from lsnmt.train import checkpoint as ckpt
from tests.conftest import ROOT
from tests.train.helpers import assert_equal_weights, make_bin, weights

STEPS = 80


def start(bin_dir: Path, root: Path) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "tests.train.run_train", str(bin_dir), str(root), str(STEPS)],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def wait_until(ready: Callable[[], bool], what: str, proc: subprocess.Popen, timeout: float = 60.0) -> None:
    """Poll ``ready`` until it holds; fail if ``proc`` ends or ``timeout`` passes first."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, f"training ended before {what}: {proc.stderr.read().decode()}"
        assert time.monotonic() < deadline, f"not within {timeout}s: {what}"
        time.sleep(0.02)


def wait_for(path: Path, proc: subprocess.Popen) -> None:
    wait_until(path.exists, f"{path.name} appeared", proc)


def wait_for_last(work: Path, step: int, proc: subprocess.Popen) -> None:
    """Wait until ``last.pt`` holds update ``step`` or a later one.

    ``step{N}.pt`` appears before ``last.pt`` is re-linked to it, so its existence alone is not enough: a SIGKILL
    between the two leaves ``last.pt`` at the previous save (a correct state, but not the one this test asks for).
    """
    last = work / "last.pt"
    wait_until(lambda: last.exists() and ckpt.load(last)["step"] >= step, f"last.pt reached step {step}", proc)


def test_kill_and_resume_matches_uninterrupted_run(tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    reference = start(bin_dir, tmp_path / "ref")
    victim = start(bin_dir, tmp_path / "run")
    wait_for_last(tmp_path / "run/work", 20, victim)
    victim.send_signal(signal.SIGKILL)
    victim.wait()
    assert victim.returncode == -signal.SIGKILL
    killed_at = ckpt.load(tmp_path / "run/work/last.pt")["step"]
    assert 20 <= killed_at < STEPS and not (tmp_path / "run/out").exists()

    resumed = start(bin_dir, tmp_path / "run")
    logs = {}
    for name, proc in (("resumed", resumed), ("reference", reference)):
        _, err = proc.communicate(timeout=300)
        logs[name] = err.decode()
        assert proc.returncode == 0, logs[name]
    assert f"at step {killed_at} (epoch" in logs["resumed"] and "resumed" not in logs["reference"]
    assert_equal_weights(weights(tmp_path / "run/work/last.pt"), weights(tmp_path / "ref/work/last.pt"))
    assert_equal_weights(weights(tmp_path / "run/out/model.pt"), weights(tmp_path / "ref/out/model.pt"))
    for name in ("last.pt", "best.pt"):
        a, b = ckpt.load(tmp_path / "run/work" / name), ckpt.load(tmp_path / "ref/work" / name)
        assert (a["step"], a["best_valid"], a["stream"]) == (b["step"], b["best_valid"], b["stream"])
    assert (tmp_path / "run/out/curve.tsv").read_text() == (tmp_path / "ref/out/curve.tsv").read_text()
