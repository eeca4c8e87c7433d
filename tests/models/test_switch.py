"""Switch Transformer baseline: top-1 routing, capacity, load-balance loss (Fedus et al. 2021, eq. 4)."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch

from lsnmt.typed import FieldError
from models.build import build_transformer
from models.factories import LayerSpec
from models.lang import LangContext
from models.ls.switch import SwitchConfig, SwitchFFN, balance_loss, top1_dispatch
from tests.models.helpers import random_batch, tiny_config

SPEC = LayerSpec(side="encoder", layer=1, num_layers=2, embed_dim=16, ffn_dim=32, heads=2, dropout=0.0,
                 attention_dropout=0.0, activation_dropout=0.0, normalize_before=False, num_languages=3)


@pytest.mark.parametrize("factor", [0.5, 1.0, 2.0])
def test_capacity_is_respected_and_dropped_tokens_pass_as_zero(factor: float) -> None:
    torch.manual_seed(0)
    layer = SwitchFFN(SPEC, SwitchConfig(experts=4, capacity_factor=factor)).train()
    x = torch.randn(3, 10, 16)
    out = layer(x, LangContext.single(0, 1, 3)).reshape(-1, 16)
    probs = torch.softmax(layer.router(x.reshape(-1, 16)), -1)
    expert, keep = top1_dispatch(probs, layer.capacity(30))
    cap = math.ceil(factor * 30 / 4)
    assert layer.capacity(30) == cap
    assert torch.bincount(expert[keep], minlength=4).max() <= cap
    assert torch.all(out[~keep] == 0) and torch.all(out[keep].abs().sum(-1) > 0)
    kept_first = [bool(keep[(expert == e).nonzero().squeeze(1)][:cap].all()) for e in range(4)]
    assert all(kept_first)  # the first tokens (batch order) of each expert are kept
    e0 = int(expert[keep][0])
    i0 = int(((expert == e0) & keep).nonzero()[0])
    token = x.reshape(-1, 16)[i0:i0 + 1].unsqueeze(0)
    expected = probs[i0, e0] * layer.expert(e0, token, LangContext.single(0, 1, 1)).squeeze(0)
    torch.testing.assert_close(out[i0:i0 + 1], expected)


def test_router_probabilities_sum_to_one_and_balance_loss_formula() -> None:
    probs = torch.softmax(torch.randn(20, 4), -1)
    torch.testing.assert_close(probs.sum(-1), torch.ones(20))
    expert = probs.argmax(-1)
    f = torch.tensor([(expert == e).float().mean() for e in range(4)])
    p = probs.mean(0)
    torch.testing.assert_close(balance_loss(probs, expert), 4 * (f * p).sum())
    uniform = torch.full((8, 4), 0.25)
    torch.testing.assert_close(balance_loss(uniform, torch.arange(8) % 4), torch.tensor(1.0))


def test_model_places_experts_every_second_layer_and_reports_weighted_aux() -> None:
    cfg = SwitchConfig(experts=3, every=2, balance_weight=0.01)
    model = build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="switch", method_cfg=cfg).train()
    kinds = [type(layer.ffn).__name__ for layer in model.encoder.layers]
    assert kinds == ["FeedForward", "SwitchFFN"]
    src, prev = random_batch(2, 5, 4, 13)
    model(src, prev, LangContext.single(0, 1, 2))
    aux = model.aux_loss()
    layers = [m for m in model.modules() if isinstance(m, SwitchFFN)]
    assert len(layers) == 2 and all(m.layers.count == 2 for m in layers)  # one encoder, one decoder MoE layer
    assert aux is not None and 0.01 <= float(aux.detach()) <= 0.01 * 3  # the mean of 2 layers, each in [w, w E]
    torch.testing.assert_close(aux, 0.01 * (layers[0]._aux + layers[1]._aux) / 2)  # mean over MoE layers


def test_padding_takes_no_part_in_routing_capacity_or_balance() -> None:
    """Pads are not routed: the real tokens' routing, capacity and balance loss are those of the batch without
    the padded positions, and the pads' output is 0."""
    torch.manual_seed(0)
    layer = SwitchFFN(SPEC, SwitchConfig(experts=4, capacity_factor=1.0)).train()
    x = torch.randn(2, 6, 16)
    pad = torch.zeros(2, 6, dtype=torch.bool)
    pad[1, 3:] = True  # the second sentence has 3 real tokens, 3 pads
    x[1, 3:] = 100.0  # pads that would dominate routing if they were routed
    out = layer(x, LangContext.single(0, 1, 2).with_(padding=pad))
    assert torch.all(out[pad] == 0)
    real = x[~pad]  # (9, D)
    ref = layer(real.unsqueeze(0), LangContext.single(0, 1, 1))  # the 9 real tokens alone
    torch.testing.assert_close(out[~pad], ref.squeeze(0))
    probs = torch.softmax(layer.router(real), -1)
    torch.testing.assert_close(layer._aux, balance_loss(probs, probs.argmax(-1)))
    assert layer.capacity(9) == math.ceil(9 / 4)  # capacity counts the 9 real tokens, not 12


def test_encoder_pads_reach_the_router_as_padding() -> None:
    """The encoder layer hands its padding mask to the FFN: a padded batch routes like the unpadded sentences."""
    cfg = SwitchConfig(experts=3, every=2, balance_weight=0.01)
    model = build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="switch", method_cfg=cfg).train()
    src = torch.tensor([[5, 6, 7, 2], [8, 9, 2, 1]])  # pad id 1 after the second sentence
    seen: list = []
    model.encoder.layers[1].ffn.register_forward_pre_hook(lambda _m, args: seen.append(args[1].padding))
    model.encoder(src, LangContext.single(0, 1, 2))
    assert torch.equal(seen[0], src.eq(1))


def _one_expert_layer(**cfg: float) -> SwitchFFN:
    """4 experts, every token (positive inputs) routed to expert 2."""
    layer = SwitchFFN(SPEC, SwitchConfig(experts=4, capacity_factor=0.5, **cfg)).eval()
    with torch.no_grad():
        layer.router.weight.zero_()
        layer.router.weight[2] = 1.0
    return layer


def test_eval_capacity_is_fairseqs_token_fraction() -> None:
    """fairseq's ``top1gating`` in eval mode: ``capacity = ceil(moe_eval_capacity_token_fraction * tokens)``,
    default 0.25; a fraction <= 0 (fairseq's -1) keeps the training capacity; 1 drops nothing."""
    x = torch.rand(2, 8, 16) + 0.1  # 16 tokens, all to expert 2
    served = {}
    for fraction, cap in ((0.25, 4), (-1.0, 2), (1.0, 16)):
        layer = _one_expert_layer() if fraction == 0.25 else _one_expert_layer(eval_capacity_fraction=fraction)
        assert layer.capacity(16) == cap, fraction
        with torch.no_grad():
            served[fraction] = (layer(x, LangContext.single(0, 1, 2)).reshape(-1, 16).abs().sum(-1) > 0).tolist()
        assert served[fraction] == [True] * cap + [False] * (16 - cap), fraction  # the first in batch order
    assert _one_expert_layer().train().capacity(16) == 2  # training: ceil(0.5 * 16 / 4)
    with pytest.raises(FieldError, match="eval_capacity_fraction"):
        SwitchConfig(eval_capacity_fraction=1.5)


def test_switch_trains_on_mixed_direction_batches_in_every_experiment() -> None:
    """LMS-FD v1 Sec. 5 footnote 4: homogeneous batches do not apply to Switch; the other methods keep them."""
    from pathlib import Path

    from lsnmt.experiment.params import Params
    from lsnmt.methods import train_settings

    params = Params.load(Path(__file__).resolve().parents[2] / "params.yaml")
    for name, exp in params.experiments.items():
        assert train_settings(exp.train, "switch").batching == "mixed", name
    assert train_settings(params.get("opus100").train, "lms").batching == "direction"
    assert train_settings(params.get("opus100").train, None).batching == "direction"
    over = dataclasses.replace(params.get("opus100").train, batching_by_kind={"switch": "direction", "naive": "mixed"})
    assert train_settings(over, "switch").batching == "direction"  # the experiment's override wins
    assert train_settings(over, None).batching == "mixed"
