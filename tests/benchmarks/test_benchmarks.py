"""The trainer's benchmarks run at tiny size on a CPU, so that they cannot rot (their figures are not tested: speed
claims are ratios read from a real run, README "Benchmarks")."""

from __future__ import annotations

import math
import sys

import pytest

from models.config.kinds import KINDS
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import host_cost
import throughput


def test_host_cost_runs_the_trainer_and_the_bare_loop(capsys: pytest.CaptureFixture[str]) -> None:
    got = host_cost.main(["--updates", "2", "--repeats", "1", "--max-tokens", "512"])
    assert all(v > 0 and math.isfinite(v) for v in got.values()), got
    out = capsys.readouterr().out
    assert "t_trainer / t_bare" in out and "updates/s" in out


def test_throughput_measures_naive_and_every_kind(capsys: pytest.CaptureFixture[str]) -> None:
    rows = throughput.main(["--tiny", "--experiment", "default_gpu", "--updates", "1", "--threads", "1"])
    assert {r.kind for r in rows} == {"naive", *KINDS}
    for r in rows:
        assert r.seconds > 0 and r.tokens > 0 and r.flops > 0, r
    table = capsys.readouterr().out
    assert "| default_gpu | naive | naive |" in table and "MFU" in table
