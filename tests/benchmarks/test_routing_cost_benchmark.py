"""``benchmarks/routing_cost.py`` runs at tiny size on a CPU, so that it cannot rot (its figures are not tested:
speed claims are ratios read from a real run)."""

from __future__ import annotations

import math
import sys

import pytest

from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "benchmarks"))

import routing_cost


def test_routing_cost_times_and_counts_routed_methods_against_naive(capsys: pytest.CaptureFixture[str]) -> None:
    rows = routing_cost.main(["--tiny", "--only", "lsl_src_tgt", "per_target", "--updates", "1", "--rounds", "1",
                              "--shape-updates", "2", "--max-tokens", "256"])
    assert [r.name for r in rows] == ["naive", "lsl_src_tgt", "per_target"]
    assert all(r.ms > 0 and math.isfinite(r.ms) and r.ops > r.kernels > 0 for r in rows)
    assert all(r.copies == 0 for r in rows)  # the batches are on the device before the updates
    out = capsys.readouterr().out
    assert "x naive" in out and "beyond naive" in out
