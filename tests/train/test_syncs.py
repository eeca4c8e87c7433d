"""No host-device synchronisation in the translation trainer's steady-state updates (models/syncs.py counts them on a
CPU; on a GPU each one would stall the host until every queued kernel has run)."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsnmt.train.curve import Meters
from lsnmt.train.dist import Dist
from lsnmt.train.loop import Job, run_updates
from lsnmt.train.step import train_step
from lsnmt.train.trainer import setup, wrap
from models.build import build_transformer
from models.syncs import count_syncs
from tests.train.helpers import make_bin, tiny_experiment

UPDATES = 6


@pytest.mark.parametrize("batching", ["direction", "mixed"])
def test_updates_between_two_checks_never_synchronise(tmp_path: Path, batching: str) -> None:
    """Six updates through the trainer's feed, step and loop with one check, after the last: the only reads of a
    device value are that check's one copy of the pending losses and norms (loop.py), none per update."""
    exp = tiny_experiment(batching=batching, max_steps=100, max_tokens=96)
    run, _ = setup(exp, make_bin(tmp_path), Dist.from_env(), build_transformer, None)
    wrap(run, None)
    try:
        for _ in range(2):  # warm-up: first-call work (allocations, lazy attributes) is not steady state
            train_step(run, run.feed.next())
        job = Job(name="t", total=run.step + UPDATES, log_every=10**6, save_every=10**6,
                  update=lambda _n: train_step(run, run.feed.next()), save=lambda _n, **_kw: None)
        with count_syncs() as syncs:
            run_updates(job, run.step, Meters())
    finally:
        run.feed.close()
    assert run.step == 2 + UPDATES
    assert [what for what, _ in syncs.events] == ["tolist"], syncs.report()
    assert syncs.events[0][1].startswith("train/loop.py:"), syncs.report()
