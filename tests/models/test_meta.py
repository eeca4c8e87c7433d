"""models.meta.meta_device: the same shapes as torch.device("meta"), initialisers skipped only inside."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from models.build import build_transformer
from models.config.model import ModelConfig
from models.ls.clm import CLMConfig
from models.ls.lms import LMSConfig
from models.meta import meta_device


@pytest.mark.parametrize("method,cfg", [(None, None), ("lms", LMSConfig(rank=4)), ("clm", CLMConfig(features=3))])
def test_same_parameters_as_the_plain_meta_device_and_initialisers_restored(method: str | None, cfg: object) -> None:
    kw = {"vocab_size": 1000, "num_languages": 3, "method": method, "method_cfg": cfg}
    before = nn.init.xavier_uniform_
    with torch.device("meta"):
        plain = build_transformer(ModelConfig(arch="transformer_small"), **kw)  # type: ignore[arg-type]
    with meta_device():
        fast = build_transformer(ModelConfig(arch="transformer_small"), **kw)  # type: ignore[arg-type]
    assert nn.init.xavier_uniform_ is before
    assert [(n, p.shape) for n, p in plain.named_parameters()] == [(n, p.shape) for n, p in fast.named_parameters()]
    assert all(p.is_meta for p in fast.parameters())
    assert nn.Linear(4, 4).weight.abs().sum() > 0  # outside, initialisation runs again


def test_initialisers_are_restored_after_an_error() -> None:
    before = nn.init.normal_
    with pytest.raises(RuntimeError), meta_device():
        raise RuntimeError("boom")
    assert nn.init.normal_ is before
