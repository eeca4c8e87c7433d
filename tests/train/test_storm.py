"""A preemption storm: one training SIGTERMed 20 times at random points (during its imports and set-up, inside
checkpoint writes, at validation, mid-run), requeued each time, ends with the weights, checkpoints and curve of the
uninterrupted run, bit for bit."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lsnmt.train import checkpoint as ckpt
from tests.conftest import ROOT
from tests.train.helpers import assert_equal_weights, make_bin, weights

STEPS = 1000
STORM = 20
THROTTLE = 0.1
"""Seconds each update of a preempted job waits (the maths is untouched): a job stopped by the parent's timer
(at most :data:`MAX_DELAY` seconds) gets at most 40 updates done, one stopped by an injection at most 20 (its
third save, second validation or twelfth update), so 20 preemptions cannot reach :data:`STEPS` however fast the
machine is."""
MAX_DELAY = 4.0
STOPPED = (128 + signal.SIGTERM, -signal.SIGTERM)
"""A stopped job's status: 143 from the stage's guard, or killed by a second SIGTERM of the parent's that came
while the stopped job was already exiting (after its guard had logged the stop and put the default handler back)."""


def start(bin_dir: Path, root: Path, where: str, throttle: float = 0.0) -> subprocess.Popen:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT), "STORM_THROTTLE": str(throttle)}
    cmd = [sys.executable, "-m", "tests.train.storm_child", str(bin_dir), str(root), str(STEPS), where]
    return subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def plan(rng: random.Random) -> list[tuple[str, float | None]]:
    """(injection, seconds before the parent's own SIGTERM or ``None``) of each preemption."""
    out = []
    for _ in range(STORM):
        kind = rng.choice(["save", "valid", "update", "none"])
        where = {
            "save": f"save:{rng.randint(1, 3)}",
            "valid": f"valid:{rng.randint(1, 2)}",
            "update": f"update:{rng.randint(1, 12)}",
            "none": "none",
        }[kind]
        out.append((where, rng.uniform(0.2, MAX_DELAY) if kind == "none" or rng.random() < 0.3 else None))
    return out


def preempt(bin_dir: Path, root: Path, where: str, delay: float | None, throttle: float) -> tuple[int, str, int]:
    """One requeued job: (exit status, its log, the step of last.pt after it)."""
    proc = start(bin_dir, root, where, throttle)
    if delay is not None:
        deadline = time.monotonic() + delay
        while proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=600)
    last = root / "work" / "last.pt"
    return proc.returncode, err.decode(), ckpt.load(last)["step"] if last.is_file() else 0


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_twenty_preemptions_end_where_the_uninterrupted_run_does(tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    reference = start(bin_dir, tmp_path / "ref", "none")
    rng = random.Random(43)
    history = []
    for where, delay in plan(rng):
        status, log, step = preempt(bin_dir, tmp_path / "run", where, delay, THROTTLE)
        history.append((where, delay and round(delay, 1), status, step))
        assert status in STOPPED, f"{history}: {log[-3000:]}"
        assert "stopped by SIGTERM" in log and "Traceback" not in log, f"{history}: {log[-3000:]}"
    assert 0 < history[-1][3] < STEPS, history  # the storm stopped the run before its end
    status, log, _ = preempt(bin_dir, tmp_path / "run", "none", None, 0.0)
    _, ref_log = reference.communicate(timeout=600)
    assert status == 0 and reference.returncode == 0, log[-3000:] + ref_log.decode()[-3000:]

    run, ref = tmp_path / "run", tmp_path / "ref"
    assert_equal_weights(weights(run / "out" / "model.pt"), weights(ref / "out" / "model.pt"))
    for name in ("last.pt", "best.pt"):
        a, b = ckpt.load(run / "work" / name), ckpt.load(ref / "work" / name)
        assert_equal_weights(a["model"], b["model"])
        assert (a["step"], a["best_valid"], a["stream"], a["meters"]) == (
            b["step"],
            b["best_valid"],
            b["stream"],
            b["meters"],
        )
    assert (run / "out" / "curve.tsv").read_text() == (ref / "out" / "curve.tsv").read_text()
    assert sorted(p.name for p in (run / "work").iterdir()) == sorted(p.name for p in (ref / "work").iterdir())
    assert not list(run.rglob("*.tmp")), "a temporary file of a killed write is left"
