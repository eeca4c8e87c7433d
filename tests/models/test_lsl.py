"""Language-Specific Transformer Layers and the search layer (Pires et al. 2023, Sec. 3.1-3.3, Tables 1, 4, 5)."""

from __future__ import annotations

import pytest
import torch
from torch import Tensor, nn

from lsnmt.typed import ConfigError, build
from models.build import build_transformer
from models.config.model import ModelConfig
from models.lang import LangContext
from models.ls.lsl import (
    LanguageSpecific,
    LSLConfig,
    LSLSearchConfig,
    SearchLayer,
    dense_init,
    dense_name,
    layers_to_config,
    mixing_weights,
    search_factories,
    select,
)
from models.param_count import inference_params, train_params
from tests.models.helpers import assert_mixed_equals_single, random_batch, tiny_config

D, F = 16, 32
LAYER = 4 * (D * D + D) + (2 * D * F + F + D) + 2 * 2 * D  # one encoder layer: attention, FFN, two LayerNorms


def _lsl(num_languages: int = 3, seed: int = 0, **cfg: object) -> nn.Module:
    torch.manual_seed(seed)
    return build_transformer(tiny_config(encoder_layers=4), vocab_size=13, num_languages=num_languages, method="lsl",
                             method_cfg=LSLConfig(**cfg)).eval()  # type: ignore[arg-type]


def _search(num_languages: int = 3, **cfg: object) -> nn.Module:
    torch.manual_seed(0)
    return build_transformer(tiny_config(encoder_layers=4), vocab_size=13, num_languages=num_languages,
                             factories=search_factories(LSLSearchConfig(**cfg))).eval()  # type: ignore[arg-type]


class Tag(nn.Module):
    """A stand-in layer that adds its own constant: shows which copy a sentence went through."""

    def __init__(self, value: float) -> None:
        super().__init__()
        self.value = nn.Parameter(torch.tensor(value))

    def forward(self, x: Tensor, langs: LangContext, padding_mask: Tensor | None = None) -> Tensor:
        assert padding_mask is None or padding_mask.size(0) == x.size(0)  # batch-major arguments follow their rows
        return x + self.value


@pytest.mark.parametrize("index", ["src", "tgt"])
def test_sentences_are_routed_by_their_index_language(index: str) -> None:
    layer = LanguageSpecific([Tag(10.0 * (k + 1)) for k in range(3)], index)  # type: ignore[arg-type]
    langs = LangContext(torch.tensor([0, 2, 1, 2]), torch.tensor([1, 0, 0, 1]))
    out = layer(torch.zeros(4, 2, 1), langs, torch.zeros(4, 2, dtype=torch.bool))
    ids = langs.src if index == "src" else langs.tgt
    assert out[:, 0, 0].tolist() == [10.0 * (int(i) + 1) for i in ids]
    one = layer(torch.zeros(2, 2, 1), LangContext.single(2, 0, 2))  # one direction: the fast path
    assert one.flatten().tolist() == [30.0 if index == "src" else 10.0] * 4


def test_lsl_layers_of_the_model_follow_source_and_target() -> None:
    """Perturbing one language's copy changes exactly the sentences of that source (layer 1) / target (layer 4)."""
    model = _lsl(src=(1,), tgt=(4,))
    assert [type(m).__name__ for m in model.encoder.layers] == ["LanguageSpecific", "EncoderLayer", "EncoderLayer",
                                                                "LanguageSpecific"]
    assert (model.encoder.layers[0].index, model.encoder.layers[3].index) == ("src", "tgt")
    src, prev = random_batch(6, 5, 4, 13)
    langs = LangContext(torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([1, 2, 0, 2, 0, 1]))
    before = model(src, prev, langs)
    for layer, lang, ids in ((0, 2, langs.src), (3, 0, langs.tgt)):
        with torch.no_grad():
            for p in model.encoder.layers[layer].active_parameters(lang, lang):  # language lang's slices
                p.add_(0.5)
        changed = (model(src, prev, langs) - before).abs().flatten(1).amax(1) > 1e-6
        assert changed.tolist() == (ids == lang).tolist()
        before = model(src, prev, langs)


@pytest.mark.parametrize("cfg", [dict(src=(1, 2), tgt=(4,)), dict(src=(2,), tgt=(3,), components="ffn"),
                                 dict(src=(2,), tgt=(3,), components="attention")])
def test_mixed_batch_equals_one_direction_batches(cfg: dict) -> None:
    assert_mixed_equals_single(_lsl(**cfg))


def test_search_model_mixed_batch_equals_one_direction_batches() -> None:
    model = _search(mixing_init=(0.3, -0.2, 0.1))
    assert_mixed_equals_single(model)


@pytest.mark.parametrize("languages", [3, 7])
def test_effective_parameters_do_not_depend_on_the_languages(languages: int) -> None:
    naive = build_transformer(tiny_config(encoder_layers=4), vocab_size=13, num_languages=languages)
    model = _lsl(languages, src=(1, 2), tgt=(4,))
    assert train_params(model) == train_params(naive) + 3 * (languages - 1) * LAYER
    effective = {inference_params(model, s, t) for s in range(languages) for t in range(languages) if s != t}
    assert effective == {inference_params(naive, 0, 1)}


def test_component_variants_count_their_sublayers() -> None:
    naive = train_params(build_transformer(tiny_config(encoder_layers=4), vocab_size=13, num_languages=3))
    ffn, attn = 2 * D * F + F + D, 4 * (D * D + D)
    assert train_params(_lsl(src=(1,), tgt=(4,), components="ffn")) == naive + 2 * 2 * ffn
    assert train_params(_lsl(src=(1,), tgt=(4,), components="attention")) == naive + 2 * 2 * attn
    model = _lsl(src=(1,), components="ffn")
    assert isinstance(model.encoder.layers[0].ffn, LanguageSpecific)
    assert not isinstance(model.encoder.layers[0].self_attn, LanguageSpecific)


def test_search_layer_is_eq1_with_softmax_weights() -> None:
    model = _search(mixing_init=(0.5, -1.0, 2.0))
    layer = model.encoder.layers[2]
    assert isinstance(layer, SearchLayer) and layer.languages == 3
    w = layer.weights()
    torch.testing.assert_close(w, torch.tensor([0.5, -1.0, 2.0]).softmax(0))
    x, mask = torch.randn(2, 5, D), torch.zeros(2, 5, dtype=torch.bool)
    langs = LangContext.single(1, 2, 2)
    expected = w[0] * layer.shared(x, langs, mask) + w[1] * layer.one(1, x, langs, mask) \
        + w[2] * layer.one(2, x, langs, mask)
    torch.testing.assert_close(layer(x, langs, mask), expected)


def test_search_weights_are_a_softmax_per_layer() -> None:
    model = _search()
    with torch.no_grad():
        for i, layer in enumerate(model.encoder.layers):
            layer.mixing.copy_(torch.tensor([i, -i, 0.5 * i]))
    w = mixing_weights(model.state_dict())
    assert w.shape == (4, 3)
    torch.testing.assert_close(w.sum(1), torch.ones(4))
    assert bool((w >= 0).all())
    for i in range(4):
        torch.testing.assert_close(w[i], torch.tensor([i, -i, 0.5 * i]).softmax(0))
    with pytest.raises(ValueError, match="not a search model"):
        mixing_weights(_lsl().state_dict())


def test_search_gradient_reaches_the_mixing_scalars() -> None:
    model = _search().train()
    src, prev = random_batch(3, 5, 4, 13)
    model(src, prev, LangContext(torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0]))).sum().backward()
    assert all(layer.mixing.grad is not None and bool(layer.mixing.grad.abs().sum() > 0)
               for layer in model.encoder.layers)


def test_argmax_selection() -> None:
    w = torch.tensor([[0.2, 0.7, 0.1], [0.6, 0.3, 0.1], [0.3, 0.3, 0.4], [0.4, 0.4, 0.2]])
    assert select(w) == ["src", "shared", "tgt", "shared"]  # an exact tie goes to the earlier (shared) component
    assert layers_to_config(["shared", "src", "src", "shared", "tgt"]) == ((2, 3), (5,))
    with pytest.raises(ValueError):
        select(torch.ones(4, 2))


def test_search_model_counts() -> None:
    """Each search layer has the parameters of L + 1 layers plus 3 (Sec. 3.2); a direction uses three layers."""
    naive = build_transformer(tiny_config(encoder_layers=4), vocab_size=13, num_languages=3)
    model = _search()
    assert train_params(model) == train_params(naive) + 4 * (3 * LAYER + 3)
    assert inference_params(model, 0, 1) == inference_params(naive, 0, 1) + 4 * (2 * LAYER + 3)


def test_dense_initialisation_copies_weights_exactly() -> None:
    torch.manual_seed(1)
    dense = build_transformer(tiny_config(encoder_layers=4), vocab_size=13, num_languages=3).eval()
    model = _lsl(seed=5, src=(1,), tgt=(3, 4))
    state = dense.state_dict()
    assert dense_init(model, state) == len(model.state_dict())
    for name, t in model.state_dict().items():  # a stacked weight: every language's slice
        assert torch.equal(t, state[dense_name(name)].expand_as(t)), name
    assert dense_name("encoder.layers.2.langs.7.ffn.fc1.weight") == "encoder.layers.2.ffn.fc1.weight"
    assert dense_name("encoder.layers.2.langs.ffn.fc1.weight") == "encoder.layers.2.ffn.fc1.weight"
    grouped = model.encoder.layers[0].langs
    for lang in range(3):  # every language's copy holds the dense layer
        for (_, a), (_, b) in zip(grouped.named_parameters(), dense.encoder.layers[0].named_parameters(), strict=True):
            assert torch.equal(a[lang], b)
    src, prev = random_batch(3, 5, 4, 13)
    langs = LangContext(torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0]))
    torch.testing.assert_close(model(src, prev, langs), dense(src, prev, langs))  # identical copies: same function


def test_dense_initialisation_rejects_another_shape() -> None:
    dense = build_transformer(tiny_config(encoder_layers=4, decoder="per-target"), vocab_size=13, num_languages=3)
    with pytest.raises(ValueError, match="has no counterpart here"):  # per-target decoders for one shared decoder
        dense_init(_lsl(src=(1,)), dense.state_dict())
    shallow = build_transformer(tiny_config(encoder_layers=3), vocab_size=13, num_languages=3)
    with pytest.raises(ValueError, match="the dense model has no 'encoder.layers.3"):
        dense_init(_lsl(src=(1,)), shallow.state_dict())
    wide = build_transformer(tiny_config(encoder_layers=4, embed_dim=32), vocab_size=13, num_languages=3)
    with pytest.raises(ValueError, match="dense model"):
        dense_init(_lsl(src=(1,)), wide.state_dict())


@pytest.mark.parametrize(("entry", "message"), [
    ({"src": [0]}, "src[0]: encoder layers are numbered from 1"),
    ({"src": [3], "tgt": [3, 4]}, "tgt: layer 3 is also in src"),
    ({"src": [2, 2]}, "src: repeated layer"),
    ({"architecture": "s", "tgt": [1]}, "architecture: takes src/tgt from the search"),
    ({"components": "decoder"}, "components: 'decoder' is not one of"),
    ({"dense_steps": -1}, "dense_steps: must be >= 0"),
])
def test_config_errors_name_the_key(entry: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("]", r"\]")):
        build(LSLConfig, entry, "m")


def test_search_config_errors() -> None:
    with pytest.raises(ConfigError, match="mixing_init: three scalars"):
        build(LSLSearchConfig, {"mixing_init": [0.0, 1.0]}, "s")
    with pytest.raises(ConfigError, match="seeds: at least one run"):
        build(LSLSearchConfig, {"seeds": []}, "s")


def test_layers_beyond_the_encoder_and_unbound_architectures_fail_clearly() -> None:
    with pytest.raises(ValueError, match=r"layer 5 is beyond the 4-layer encoder"):
        _lsl(src=(1,), tgt=(5,))
    with pytest.raises(ValueError, match="bind them first"):
        _lsl(architecture="nas")


def test_shape_overrides() -> None:
    model = build_transformer(tiny_config(decoder="per-target"), vocab_size=13, num_languages=3, method="lsl",
                              method_cfg=LSLConfig(encoder_layers=3, decoder="shared", src=(3,)))
    assert len(model.encoder.layers) == 3 and len(model.decoder.stacks) == 1
    assert LSLConfig(src=(3, 4), tgt=(13, 14, 15)).describe() == "LSL (SRC={3, 4} & TGT={13, 14, 15})"
    assert LSLConfig(tgt=(2,)).describe() == "LSL (SRC=∅ & TGT={2})"


def test_search_model_of_the_paper_has_804m_parameters() -> None:
    """Sec. 4.2: the separate-decoder search model "used a total of 804 million parameters" (16+3, 10 languages,
    the 240,000-row embedding table of the LSL rows)."""
    cfg = ModelConfig(arch="transformer_base", encoder_layers=16, decoder_layers=3, decoder="per-target")
    with torch.device("meta"):
        model = build_transformer(cfg, vocab_size=240_000, num_languages=10,
                                  factories=search_factories(LSLSearchConfig()))
    assert round(train_params(model) / 1e6) == 804


def test_lsl_rows_reproduce_the_papers_sizes_to_the_printed_digit() -> None:
    """Tables 1, 4, 5: every |θ| and |θeff| of flores10_lsl's LSL methods (reports/paper/counts.yaml) to the paper's
    1M precision (240,000 embedding rows)."""
    from lsnmt.experiment.params import Params
    from lsnmt.report.paper_counts import count, load

    rows = [r for r in load(Params.load()) if r.kind == "lsl" and not r.method.startswith("naive-d")]
    assert {r.table for r in rows} == {"1", "4", "5"} and len(rows) == 12
    for row in rows:
        r = count(row)
        assert abs(r.train_params - row.paper_train_params) <= row.paper_unit / 2, row.method
        assert abs(r.inference_params - row.paper_inference_params) <= row.paper_unit / 2, row.method
    layer = 4 * (512 * 512 + 512) + (2 * 512 * 2048 + 2048 + 512) + 2 * 2 * 512
    nas, s34 = (count(next(r for r in rows if r.method == m)) for m in ("lsl-nas", "lsl-s34-t0"))
    assert nas.train_params - s34.train_params == 3 * 9 * layer  # three more LSLs of nine extra copies each


@pytest.mark.parametrize("cfg", [
    dict(src=(1, 2), tgt=(4,)),  # LSL
    dict(src=(2,), tgt=(3,), components="ffn"),  # LS-FFN
    dict(src=(2,), tgt=(3,), components="attention"),  # LS-ATTENTION
    dict(src=(4,), tgt=(1, 2, 3), decoder="per-target"),  # separate decoders (LSL-NAS)
    dict(src=(1,), tgt=(3, 4), decoder="shared"),  # shared decoder (LSL-NAS-SD)
], ids=["lsl", "ls-ffn", "ls-attention", "separate-decoders", "shared-decoder"])
def test_every_variant_trains_and_decodes(cfg: dict) -> None:
    """One update moves the language-specific weights of the batch's languages only; beam search runs."""
    from types import SimpleNamespace

    from lsnmt.decode.beam import beam_search
    from lsnmt.train.loss import default_criterion

    model = _lsl(**cfg).train()
    src, prev = random_batch(3, 5, 4, 13)
    target = torch.cat([prev[:, 1:], torch.full((3, 1), 2)], 1)
    batch = SimpleNamespace(src_tokens=src, prev_output_tokens=prev, target=target, langs=LangContext.single(1, 2, 3))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    loss, _, _ = default_criterion(model, batch, 0.1, 1)
    loss.backward()
    opt.step()
    moved = {k for k, v in model.state_dict().items() if not torch.equal(v, before[k])}
    copies = {k for k in before if ".langs." in k and k.startswith("encoder.")}  # every language's weights, stacked
    assert copies and moved & copies
    state = model.state_dict()
    languages = {lang for k in moved & copies for lang in range(3) if not torch.equal(state[k][lang], before[k][lang])}
    assert languages and languages <= {1, 2}  # src 1 or tgt 2 only
    out = beam_search(model.eval(), src, LangContext.single(1, 2, 3), beam=2, max_len_b=4)
    assert len(out.tokens) == 3 and all(len(t) <= 5 for t in out.tokens)
