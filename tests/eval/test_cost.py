"""Parameter counts and batch-size-1 decoding speed of a tiny model."""

from __future__ import annotations

import torch

from lsnmt.eval.cost import decoding_speed, parameter_counts
from models.build import build_transformer
from models.param_count import train_params
from tests.models.helpers import tiny_config


def test_parameter_counts() -> None:
    model = build_transformer(tiny_config(decoder="per-target"), vocab_size=30, num_languages=3)
    counts = parameter_counts(model, [(0, 1), (1, 0)])
    assert counts["train_params"] == train_params(model)
    assert counts["inference_params_min"] == counts["inference_params_max"] < counts["train_params"]


def test_decoding_speed_restores_threads() -> None:
    torch.manual_seed(0)
    model = build_transformer(tiny_config(), vocab_size=30, num_languages=2).eval()
    sources = [torch.tensor([5, 6, 7, 2]), torch.tensor([8, 9, 2])]
    threads = torch.get_num_threads()
    r = decoding_speed(model, sources, 0, 1, beam=2, max_len_a=0.0, max_len_b=4, runs=2)
    assert torch.get_num_threads() == threads
    assert r["tokens_per_second"] > 0 and r["runs"] == 2 and r["batch_size"] == 1
    assert 2 <= r["tokens_per_run"] <= 2 * 5  # at most max_len_b tokens + EOS per sentence
