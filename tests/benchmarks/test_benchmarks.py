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


def test_sclm_costs_what_eq2_costs_and_no_more() -> None:
    """CLM's training cost is its maths: sCLM's FLOPs beyond naive's are Eq. 2's bank product ``h [W_1 ... W_k]``
    (``2 T d^2 k`` per module and product) in 30 modules (6 encoder layers x 2 sublayers, 6 decoder layers x 3) and
    three products per update (the forward's, and the backward's two: ``models.ls.clm.MixFunction``), plus the small
    proportion and mixing products (< 1%). So the ~43x naive's FLOPs of ``benchmarks/ls_speed.py --flops --only
    sclm-k194`` is the method's cost at the paper's k, not overhead of ours (the former checkpointed mix re-ran the
    forward's product in the backward: four, 57x)."""
    import ls_speed
    import torch

    known, meta = ls_speed.methods(), torch.device("meta")
    b = ls_speed.batch(256, meta, mixed=True)
    naive = ls_speed.flops(*ls_speed.build(*known["naive"], "transformer_small", meta), b)
    sclm = ls_speed.flops(*ls_speed.build(*known["sclm-k194"], "transformer_small", meta), b)
    tokens, d, k = b.target.numel(), 512, known["sclm-k194"][1].features
    assert b.src_tokens.numel() == tokens and k == 194
    eq2 = 30 * 3 * 2 * tokens * d * d * k
    assert 1.0 <= (sclm - naive) / eq2 < 1.01
