"""Operations per training update (``lsnmt/train/ops.py``): what a GPU's host dispatches for one eager update of
``default_gpu``'s model, forward, loss, backward and optimizer step (``train.compile`` off), for the naive model and
one method of every kind.

The count does not depend on the machine, the width or the batch's size (only on its layout: every direction of
the experiment is in the batch), so a CPU test holds it. ``naive`` is bounded by what it is today; every kind by a
multiple of naive's count (a language-specific method should add a few operations to the update, not repeat it per
language), FD and LMS+FD by more: they run two forward passes per update (LMS-FD Sec. 3-4). Grouped language-specific
computations are counted in a GPU's layout (``models.tiles.CPU_LAYOUT = "tiles"``): what a GPU's host dispatches.

Issue 38's target, every kind <= 1.5x naive, holds but for two kinds, bounded at what they need today (2026-11-28,
default_gpu, tiles): CLSR 2.25x (15 gated sublayers, each a two-layer gate with its noise, a target projection on
rows tiled by language and the mix: ~70 operations each) and sCLM 1.89x (mCLM 1.84x; 15 mixing modules, each a
feature bank, the proportions and ``MixFunction``'s three products). Their updates are FLOP-bound, not
dispatch-bound (sCLM's update is 43x naive's FLOPs, docs/ls_speed.md). Naive's own target (<= 600) is not met:
33 linear maps cost ~16 operations each through ``F.linear`` (views, three transposes in ``addmm``'s backward,
the bias's sum, two ``detach`` to accumulate the gradients), and the one form with fewer (a hand-written autograd
function) would run every linear map's backward in Python: fewer operations, more host time (a chain of 10 maps:
124 operations to 84, 22.6 to 28.7 us per map on a CPU). The same update through PyTorch's own ``nn.Transformer``
dispatches 1,703 operations and through MarianMT 1,371 (``benchmarks/op_reference.py``; its test holds ours at
<= 0.6x ``nn.Transformer``'s).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import models.tiles
from lsnmt.experiment.params import Experiment, Params
from lsnmt.methods import resolve
from lsnmt.train.ops import mixed_batch, update_ops
from models.config.kinds import KINDS
from models.opcount import OpLog

ROOT = Path(__file__).resolve().parents[2]
ONE_PER_KIND = ("lms", "fd", "lms_fd", "switch", "clsr", "sclm", "adapter", "deep", "lsl_src_tgt")
NAIVE_TOTAL, NAIVE_KERNELS = 950, 365
"""naive's bounds: 944 operations, 361 of them computing, on 2026-11-28 (976 and 383 before the padding mask's bias
was made once per forward; 1,362 and 520 before the fused projections, one-operation dropout and the causal
self-attention without a mask)."""
RATIO = {"fd": 2.5, "lms_fd": 2.5, "clsr": 2.3, "sclm": 1.95}
"""Allowed multiple of naive's count; 1.5 for every other kind (module docstring: CLSR and sCLM miss 1.5x)."""


@pytest.fixture(autouse=True)
def gpu_layout(monkeypatch: pytest.MonkeyPatch) -> None:
    """Grouped computations in tiles, as on a GPU (a CPU's own segments dispatch per language)."""
    monkeypatch.setattr(models.tiles, "CPU_LAYOUT", "tiles")


@pytest.fixture(scope="module")
def default_gpu() -> Experiment:
    exp = Params.load(ROOT / "params.yaml").get("default_gpu")
    return dataclasses.replace(exp, model=dataclasses.replace(exp.model, embed_dim=32, ffn_dim=64))


@pytest.fixture(scope="module")
def naive(default_gpu: Experiment) -> OpLog:
    return count(default_gpu, "naive")


def count(exp: Experiment, method: str) -> OpLog:
    return update_ops(exp, method, vocab_size=200, sample=mixed_batch(exp, 200, max_tokens=512, length=8))


def test_one_method_per_kind(default_gpu: Experiment) -> None:
    assert {resolve(default_gpu.method_cfg, m)[0] for m in ONE_PER_KIND} == set(KINDS)


def test_the_count_does_not_depend_on_the_width(default_gpu: Experiment, naive: OpLog) -> None:
    wide = dataclasses.replace(default_gpu, model=dataclasses.replace(default_gpu.model, embed_dim=64, ffn_dim=96))
    assert count(wide, "naive").counts == naive.counts


def test_naive_update(naive: OpLog) -> None:
    assert naive.total <= NAIVE_TOTAL and naive.kernels <= NAIVE_KERNELS, naive.report()


@pytest.mark.parametrize("method", ONE_PER_KIND)
def test_a_kind_adds_operations_not_passes(default_gpu: Experiment, naive: OpLog, method: str) -> None:
    ops = count(default_gpu, method)
    limit = RATIO.get(method, 1.5)
    assert ops.total <= limit * naive.total, f"{method}: {ops.total / naive.total:.2f}x naive ({ops.report()})"
