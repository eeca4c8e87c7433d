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
import op_reference
import throughput


def test_host_cost_runs_the_floor_and_default_gpus_model_with_their_operation_counts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    got = host_cost.main(["--tiny", "--updates", "2", "--repeats", "1", "--max-tokens", "512"])
    assert set(got) == {"floor", "default_gpu"}
    for figures in got.values():
        assert all(v >= 0 and math.isfinite(v) for v in figures.values()), figures
        assert figures["trainer"] > 0 and figures["bare"] > 0 and figures["warmup"] >= 5
    assert got["default_gpu"]["ops"] > got["floor"]["ops"] > got["floor"]["kernels"] > 0  # 3+3 layers vs 1+1
    out = capsys.readouterr().out
    assert "| default_gpu |" in out and "ops per update" in out and "t_trainer / t_bare" in out
    assert "Python calls per update" in out


def test_the_trainer_adds_few_python_calls_to_an_update() -> None:
    """The trainer's own Python work per update, beyond the model's, the loss's and the optimizer's (the bare loop's),
    is small: 1.24x the bare loop's calls on the floor model (eager), 4.63x before the update stopped walking the
    model's modules each update (training mode, the parameter list) and seeding every backend (2026-11-28)."""
    got = host_cost.main(["--models", "floor", "--updates", "2", "--repeats", "1", "--max-tokens", "512",
                          "--warmup-seconds", "1"])
    assert got["floor"]["trainer_calls"] <= 1.5 * got["floor"]["bare_calls"], got["floor"]


def test_our_update_dispatches_fewer_operations_than_pytorchs_own_transformer(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The same update (default_gpu's layout) through ``nn.Transformer`` dispatches 1,703 operations, ours 944
    (0.55x; MarianMT's 1,371, post-norm, 2026-11-28): the count is held against a reference, not only its past."""
    got = op_reference.main(["--updates", "1", "--repeats", "1", "--warmup-seconds", "0"])
    assert got["ours"]["ops"] <= 0.6 * got["torch"]["ops"], got
    assert "marian" not in got or got["ours"]["ops"] < got["marian"]["ops"], got
    assert all(r["seconds"] > 0 for r in got.values())
    assert "| torch |" in capsys.readouterr().out


def test_throughput_measures_naive_and_every_kind_after_a_warm_up(capsys: pytest.CaptureFixture[str]) -> None:
    rows = throughput.main(["--tiny", "--experiment", "default_gpu", "--updates", "1", "--threads", "1",
                            "--deadline", "600"])
    assert {r.kind for r in rows} == {"naive", *KINDS}
    for r in rows:
        assert not r.error and r.seconds > 0 and r.tokens > 0 and r.flops > 0, r
        assert r.warmup >= 5 and r.timed >= 1, r
    table = capsys.readouterr().out
    assert "| default_gpu | naive | naive |" in table and "MFU" in table


def test_throughput_prints_its_table_when_a_method_fails_or_the_deadline_passes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(*args: object) -> throughput.Row:
        raise RuntimeError("CUDA out of memory (a stand-in)")

    monkeypatch.setattr(throughput, "measure", broken)
    rows = throughput.main(["--tiny", "--experiment", "default_gpu", "--methods", "naive", "lms", "--threads", "1"])
    assert [r.error for r in rows] == ["failed: RuntimeError: CUDA out of memory (a stand-in)"] * 2
    late = throughput.main(["--tiny", "--experiment", "default_gpu", "--methods", "naive", "--deadline", "0"])
    assert late[0].error == "not timed: the 0 s deadline passed"
    out = capsys.readouterr().out
    assert "| default_gpu | lms |  | 256 | | | | | | failed: RuntimeError" in out
    assert "| default_gpu | naive |  | 256 | | | | | | not timed" in out


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
