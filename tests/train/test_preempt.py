"""SIGTERM (SLURM preemption or time limit) saves ``last.pt`` and stops; the resumed run ends bitwise where an
uninterrupted one does, and several ranks stop at the same update."""

from __future__ import annotations

import os
import signal
import socket
from pathlib import Path

import pytest
import torch.multiprocessing as mp

from lsnmt.train import checkpoint as ckpt
from lsnmt.train.loss import default_criterion
from lsnmt.train.trainer import Interrupted, train
from tests.train.helpers import assert_equal_weights, make_bin, tiny_experiment, weights
from tests.train.test_resume import STEPS, start, wait_for


def test_sigterm_saves_and_the_resumed_run_matches(tmp_path: Path) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    reference = start(bin_dir, tmp_path / "ref")
    victim = start(bin_dir, tmp_path / "run")
    wait_for(tmp_path / "run/work/step20.pt", victim)
    victim.send_signal(signal.SIGTERM)
    _, err = victim.communicate(timeout=60)
    assert victim.returncode == 1 and "Interrupted: stopped by SIGTERM after update" in err.decode(), err.decode()
    stopped_at = ckpt.load(tmp_path / "run/work/last.pt")["step"]
    assert 20 <= stopped_at < STEPS and not (tmp_path / "run/out").exists()
    assert f"after update {stopped_at};" in err.decode()
    steps_on_disk = {p.name for p in (tmp_path / "run/work").glob("step*.pt")}
    assert all(int(name[4:-3]) % 5 == 0 for name in steps_on_disk)  # the stop wrote last.pt only

    resumed = start(bin_dir, tmp_path / "run")
    for proc in (resumed, reference):
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    assert_equal_weights(weights(tmp_path / "run/work/last.pt"), weights(tmp_path / "ref/work/last.pt"))
    assert_equal_weights(weights(tmp_path / "run/out/model.pt"), weights(tmp_path / "ref/out/model.pt"))
    assert {p.name for p in (tmp_path / "run/work").glob("step*.pt")} == {
        p.name for p in (tmp_path / "ref/work").glob("step*.pt")}
    assert (tmp_path / "run/out/curve.tsv").read_text() == (tmp_path / "ref/out/curve.tsv").read_text()


SIGNAL_AT = 3
"""Rank 1 signals itself during its third micro-batch (update 3: update_freq 1)."""


def _signalling_criterion(rank: int):
    calls = [0]

    def criterion(model, sample, epsilon, pad):
        calls[0] += 1
        if rank == 1 and calls[0] == SIGNAL_AT:
            os.kill(os.getpid(), signal.SIGTERM)  # only this rank is told
        return default_criterion(model, sample, epsilon, pad)

    return criterion


def _rank(rank: int, world: int, port: int, bin_dir: Path, root: Path) -> None:
    os.environ.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                      MASTER_PORT=str(port), GLOO_SOCKET_IFNAME="lo")
    try:
        train(tiny_experiment(max_steps=20, save_every=10), bin_dir, root / "out", root / "work",
              criterion=_signalling_criterion(rank))
    except Interrupted as exc:
        (root / f"rank{rank}.stopped").write_text(f"{exc.signum} {exc.step}")


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_ranks_stop_together_when_one_is_signalled(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    bin_dir = make_bin(tmp_path / "bin")
    mp.spawn(_rank, args=(2, port, bin_dir, tmp_path), nprocs=2, join=True)
    stops = {(tmp_path / f"rank{r}.stopped").read_text() for r in (0, 1)}
    assert stops == {f"{int(signal.SIGTERM)} {SIGNAL_AT}"}
    assert ckpt.load(tmp_path / "work/last.pt")["step"] == SIGNAL_AT and not (tmp_path / "out").exists()
