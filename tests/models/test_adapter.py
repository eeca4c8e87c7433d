"""Bottleneck adapters (Bapna and Firat 2019; Philip et al. 2020; LSL Sec. 4.3, App. D)."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from models.build import build_transformer
from models.lang import LangContext
from models.ls.adapter import AdaptedLayer, Adapter, AdapterConfig
from models.ls.deep import DeepConfig
from models.param_count import inference_params, train_params
from tests.models.helpers import assert_mixed_equals_single, random_batch, tiny_config


def _model(**kw: object) -> torch.nn.Module:
    torch.manual_seed(0)
    return build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="adapter",
                             method_cfg=AdapterConfig(bottleneck=4, **kw)).eval()  # type: ignore[arg-type]


def _adapters(model: torch.nn.Module, side: str) -> list[Adapter]:
    return [m for n, m in model.named_modules() if isinstance(m, Adapter) and n.startswith(side)]


def test_zero_up_projection_is_the_identity() -> None:
    torch.manual_seed(0)
    naive = build_transformer(tiny_config(), vocab_size=13, num_languages=3).eval()
    model = _model(encoder="src", decoder="tgt")
    state = {k.replace(".layer.", "."): v for k, v in model.state_dict().items() if ".adapter." not in k}
    naive.load_state_dict(state)
    src, prev = random_batch(3, 5, 4, 13)
    langs = LangContext(torch.tensor([0, 1, 2]), torch.tensor([1, 0, 0]))
    torch.testing.assert_close(model(src, prev, langs), naive(src, prev, langs))


def test_adapter_formula() -> None:
    a = _adapters(_model(encoder="src", decoder="tgt", zero_init=False), "encoder")[0]
    with torch.no_grad():
        a.ln_weight.normal_()
        a.b_up.normal_()  # type: ignore[union-attr]
    z = torch.randn(2, 3, 16)
    ln = F.layer_norm(z, (16,)) * a.ln_weight[1] + a.ln_bias[1]  # type: ignore[index]
    expected = z + (ln @ a.down[1] + a.b_down[1]).relu() @ a.up[1] + a.b_up[1]  # type: ignore[index]
    torch.testing.assert_close(a(z, LangContext.single(1, 0, 2)), expected)


@pytest.mark.parametrize(("enc", "dec", "enc_keys", "dec_keys"), [
    ("src", "none", ["src", "src"], []),  # LSL Language Adapters ENC
    ("src", "tgt", ["src", "src"], ["tgt", "tgt"]),  # ENC+DEC (Philip et al.)
    ("src-tgt", "none", ["src", "tgt"], []),  # ENC (SRC+TGT): bottom half source, top half target
    ("direction", "none", ["direction", "direction"], []),  # Language-Pair Adapters ENC
    ("pair", "pair", ["pair", "pair"], ["pair", "pair"]),  # Bapna and Firat, English-centric pairs
])
def test_placements(enc: str, dec: str, enc_keys: list[str], dec_keys: list[str]) -> None:
    model = _model(encoder=enc, decoder=dec)
    assert [a.key for a in _adapters(model, "encoder")] == enc_keys
    assert [a.key for a in _adapters(model, "decoder")] == dec_keys
    assert all(isinstance(layer, AdaptedLayer) for layer in model.encoder.layers)


def test_per_target_decoders_get_one_adapter_each() -> None:
    torch.manual_seed(0)
    model = build_transformer(tiny_config(decoder="per-target"), vocab_size=13, num_languages=3, method="adapter",
                              method_cfg=AdapterConfig(bottleneck=4, encoder="src", decoder="tgt"))
    dec = _adapters(model, "decoder")
    assert len(dec) == 3 * 2 and {a.key for a in dec} == {"none"} and {a.down.shape[0] for a in dec} == {1}


def test_mixed_batch_equals_one_direction_batches() -> None:
    model = _model(encoder="src-tgt", decoder="pair", zero_init=False)
    assert_mixed_equals_single(model)


def test_counts_and_active_share() -> None:
    naive = train_params(build_transformer(tiny_config(), vocab_size=13, num_languages=3))
    per = 2 * 16 * 4 + 4 + 16 + 2 * 16  # down, up, biases, LayerNorm
    model = _model(encoder="src", decoder="tgt")
    assert train_params(model) == naive + 4 * 3 * per
    assert inference_params(model, 0, 1) == naive + 4 * per
    lean = _model(encoder="xx", decoder="xx", bias=False, layer_norm=False)
    assert train_params(lean) == naive + 4 * 2 * (2 * 16 * 4)


def test_deep_method_changes_only_depth() -> None:
    model = build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="deep",
                              method_cfg=DeepConfig(encoder_layers=3, decoder_layers=4))
    assert (len(model.encoder.layers), len(model.decoder.stacks[0].layers)) == (3, 4)
    assert model.encoder.final_norm is not None  # pre-norm by default


def test_width_override_builds_adapters_on_the_wider_model() -> None:
    """``embed_dim`` (LSL Table 10's "+ hidden dim 640" adapters): the experiment's model at that width, with the
    adapters of that width; the plain adapter config keeps the experiment's width."""
    wide = train_params(build_transformer(tiny_config(embed_dim=24), vocab_size=13, num_languages=3))
    per = 2 * 24 * 4 + 4 + 24 + 2 * 24  # down, up, biases, LayerNorm at d = 24
    model = _model(encoder="src", decoder="none", embed_dim=24)
    assert tuple(_adapters(model, "encoder")[0].down.shape) == (3, 24, 4)  # (languages, d, b)
    assert train_params(model) == wide + 2 * 3 * per  # two encoder layers, one adapter per source language
    assert tuple(_adapters(_model(encoder="src", decoder="none"), "encoder")[0].down.shape) == (3, 16, 4)
