"""The three trainers' one job assembly (``lsnmt/train/job.py``, issue 41) moved no number: a tiny training of
each gives the curve (losses, rates, validation) and the work-dir fingerprint it gave before, pinned below as
printed by ``python -m tests.train.job_parity`` on the code before the change (commit 1 of branch i41b). On that
machine the final weights were bit-identical too (``weights`` in that script's output, not pinned: another CPU may
round differently)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.train.job_parity import measure

GOLDEN: dict[str, dict[str, Any]] = {
    "translation": {
        "curve": [
            ["2", "6.50007", "6.15942", "0.000250075", ""],
            ["3", "6.16748", "5.8948", "0.00050005", "6.11522"],
            ["4", "6.30773", "6.02194", "0.000750025", ""],
            ["6", "6.28337", "6.04649", "0.000894427", "5.96947"],
        ],
        "fingerprint": "fad277d6b75121f10f98901d6226507d0dfae7d7b81e7dc045a728f5446c080d",
    },
    "xelm": {
        "curve": [
            ["2", "6.36251", "6.36251", "0.0015", ""],
            ["4", "5.52835", "5.52835", "0.00225", ""],
            ["6", "5.68261", "5.68261", "0.00075", ""],
        ],
        "fingerprint": "b705a997fd028f81ac256f5c1647c1c693d1c4a2b7558832839b81e58d7f40da",
    },
    "task": {
        "curve": [["1", "6", "1.7827807068824768", "0.0"], ["2", "12", "1.5051360130310059", "0.0"]],
        "fingerprint": "7942d283251e64fa370e3a568e2025dafc39cad100e4efcea2bda9ac238530f5",
        "routes": ["share", "ls"],
    },
}


def _numbers(rows: list[list[str]]) -> list[float]:
    return [float(v) if v else math.nan for row in rows for v in row]


def test_each_trainer_gives_the_curve_and_fingerprint_it_gave_before(tmp_path: Path) -> None:
    got = measure(tmp_path)
    for name, golden in GOLDEN.items():
        assert got[name]["fingerprint"] == golden["fingerprint"], name
        assert got[name].get("routes") == golden.get("routes"), name
        assert _numbers(got[name]["curve"]) == pytest.approx(_numbers(golden["curve"]), rel=1e-5, nan_ok=True), name


def test_each_trainer_keeps_its_optimizer(tmp_path: Path) -> None:
    """Fused AdamW on every device for translation, on CUDA only for x-elm and the tasks (fused and unfused round
    differently on a CPU), the tasks' biases and LayerNorms undecayed: what each trainer built before."""
    from lsnmt.tasks import train as tasks
    from lsnmt.tasks.config import EncoderConfig, TaskConfig, TaskSource
    from lsnmt.train.dist import Dist
    from lsnmt.train.optim import adam_of, bias_or_layer_norm
    from lsnmt.train.trainer import setup
    from lsnmt.xelm import trainer as xelm
    from models.build import build_transformer
    from tests.train.helpers import make_bin, tiny_experiment
    from tests.xelm.helpers import train_cfg

    cpu = torch.device("cpu")
    exp = tiny_experiment(weight_decay=0.01, adam_betas=[0.9, 0.98], adam_eps=1e-6)
    run, _ = setup(exp, make_bin(tmp_path), Dist(0, 1, cpu, False), build_transformer, None)
    run.feed.close()
    (group,) = run.optimizer.param_groups
    assert (group["fused"], group["betas"], group["eps"], group["weight_decay"]) == (True, (0.9, 0.98), 1e-6, 0.01)
    init = exp.train.warmup_init_lr  # inverse_sqrt, warm-up 4 from 1e-7
    assert [run.parts.lr(n) for n in (0, 2, 4, 16)] == pytest.approx([init, init + (1e-3 - init) / 2, 1e-3, 5e-4])

    lm = adam_of(train_cfg())
    assert lm.fused is None and lm.exempt is None and (lm.betas, lm.eps) == ((0.9, 0.95), 1e-6)
    rates = [xelm.schedule(train_cfg()).at(n) for n in (0, 1, 2, 4, 6)]
    assert rates == pytest.approx([0.0, 0.0015, 0.003, 0.0015, 0.0])  # linear, warm-up 2, 6 updates

    enc = EncoderConfig(init="random", hidden_size=8, layers=1, heads=2, ffn_dim=8, vocab_size=30)
    task = TaskConfig(
        kind="ner",
        languages=("en",),
        source=TaskSource(kind="wikiann"),
        encoder=enc,
        lr=1e-3,
        warmup_steps=2,
        weight_decay=0.01,
    )
    adam = tasks.adam(task)
    assert adam.fused is None and adam.exempt is bias_or_layer_norm and adam.weight_decay == 0.01
    assert [tasks.schedule(task, 6).at(n) for n in (0, 1, 2, 4, 6)] == pytest.approx([5e-4, 1e-3, 1e-3, 5e-4, 0.0])
