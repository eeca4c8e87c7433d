"""LMS (Xu et al. 2023, Sec. 2): golden maths, initialisation, gradient isolation, mixed batches."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from models.build import build_transformer
from models.lang import LangContext
from models.ls.lms import LMSConfig, LMSFDConfig, LMSLinear
from models.param_count import inference_params, train_params
from tests.models.helpers import random_batch, tiny_config

L, C, R, D = 3, 5, 7, 2


def _linear(side: str = "encoder", **kw: object) -> LMSLinear:
    torch.manual_seed(0)
    lin = LMSLinear(C, R, num_languages=L, rank=D, side=side, **kw)  # type: ignore[arg-type]
    with torch.no_grad():
        lin.lms_f.normal_()  # leave the zero init so that the factors matter
    return lin


def test_pairwise_equals_dense_layer_with_synthesised_weight() -> None:
    lin, x = _linear(), torch.randn(4, 6, C)
    for s, t in [(0, 1), (2, 0), (1, 1)]:
        w = lin.weight + lin.lms_v[s] @ lin.lms_f[t]  # W + Wv[src] Wf[tgt]  (R x C)
        out = lin(x, LangContext.single(s, t, 4))
        torch.testing.assert_close(out, x @ w.T + lin.bias, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("side", "decoder_language", "expect"), [
    ("encoder", "tgt", "src"), ("decoder", "tgt", "tgt"), ("decoder", "src", "src")])
def test_languagewise_uses_one_language(side: str, decoder_language: str, expect: str) -> None:
    lin = _linear(side, synthesis="language", decoder_language=decoder_language)
    x, (s, t) = torch.randn(2, 3, C), (0, 2)
    lang = s if expect == "src" else t
    w = lin.weight + lin.lms_v[lang] @ lin.lms_f[lang]
    torch.testing.assert_close(lin(x, LangContext.single(s, t, 2)), x @ w.T + lin.bias, rtol=1e-5, atol=1e-5)


def test_zero_flat_matrices_give_the_dense_layer() -> None:
    torch.manual_seed(0)
    lin, x = LMSLinear(C, R, num_languages=L, rank=D, side="encoder"), torch.randn(2, 3, C)
    assert lin.lms_v.abs().sum() > 0 and lin.lms_f.abs().sum() == 0
    torch.testing.assert_close(lin(x, LangContext.single(1, 2, 2)), F.linear(x, lin.weight, lin.bias))
    assert 0.005 < float(lin.lms_v.detach().std()) < 0.02  # init_std 0.01


def test_other_languages_get_zero_gradient() -> None:
    lin = _linear()
    lin(torch.randn(2, 3, C), LangContext.single(1, 2, 2)).pow(2).sum().backward()
    assert lin.lms_v.grad is not None and lin.lms_f.grad is not None
    for lang in range(L):
        assert bool(lin.lms_v.grad[lang].abs().sum() > 0) == (lang == 1)  # vertical of the source
        assert bool(lin.lms_f.grad[lang].abs().sum() > 0) == (lang == 2)  # flat of the target


def test_mixed_batch_equals_one_direction_rows() -> None:
    lin, x = _linear(), torch.randn(4, 3, C)
    src, tgt = torch.tensor([0, 2, 1, 0]), torch.tensor([1, 1, 0, 2])
    mixed = lin(x, LangContext(src, tgt))
    for i in range(4):
        row = lin(x[i:i + 1], LangContext.single(int(src[i]), int(tgt[i]), 1))
        torch.testing.assert_close(mixed[i:i + 1], row, rtol=1e-5, atol=1e-6)


def _perturbed(model: torch.nn.Module) -> torch.nn.Module:
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "lms_f" in name or "shared_f" in name:
                p.normal_(0, 0.5)
    return model


@pytest.mark.parametrize("where", ["ffn", "attention", "both"])
def test_model_mixed_batch_equals_per_direction(where: str) -> None:
    torch.manual_seed(1)
    model = _perturbed(build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="lms",
                                         method_cfg=LMSConfig(rank=2, where=where)))
    model.eval()
    src, prev = random_batch(4, 5, 4, 13)
    s, t = torch.tensor([0, 1, 2, 0]), torch.tensor([1, 0, 0, 2])
    mixed = model(src, prev, LangContext(s, t))
    for i in range(4):
        one = model(src[i:i + 1], prev[i:i + 1], LangContext.single(int(s[i]), int(t[i]), 1))
        torch.testing.assert_close(mixed[i:i + 1], one, rtol=1e-4, atol=1e-5)
    assert (mixed[0] - model(src[:1], prev[:1], LangContext.single(2, 2, 1))[0]).abs().max() > 1e-4


def test_step_zero_model_is_the_dense_model() -> None:
    torch.manual_seed(0)
    lms = build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="lms",
                            method_cfg=LMSConfig(rank=2, where="both")).eval()
    naive = build_transformer(tiny_config(), vocab_size=13, num_languages=3).eval()
    missing = naive.load_state_dict(lms.state_dict(), strict=False)
    assert not missing.missing_keys and all("lms_" in k for k in missing.unexpected_keys)
    src, prev = random_batch(3, 5, 4, 13)
    langs = LangContext.single(0, 1, 3)
    torch.testing.assert_close(lms(src, prev, langs), naive(src, prev, langs))


def test_counts_and_active_slices() -> None:
    cfg = LMSConfig(rank=2)
    model = build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="lms", method_cfg=cfg)
    naive = build_transformer(tiny_config(), vocab_size=13, num_languages=3)
    per_lang = 2 * (16 + 32) * 2  # fc1 and fc2: d (r + c) each
    assert train_params(model) - train_params(naive) == 3 * 4 * per_lang  # 2 L N d (c + r), N = 4 FFNs
    assert inference_params(model, 0, 1) - inference_params(naive, 0, 1) == 4 * per_lang


def test_every_kth_layer() -> None:
    model = build_transformer(tiny_config(encoder_layers=4), vocab_size=13, num_languages=3, method="lms",
                              method_cfg=LMSConfig(rank=2, every=2))
    has = [any(isinstance(m, LMSLinear) for m in layer.modules()) for layer in model.encoder.layers]
    assert has == [False, True, False, True]


def test_lms_fd_routes() -> None:
    model = _perturbed(build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="lms_fd",
                                         method_cfg=LMSFDConfig(rank=2, route="share"))).eval()
    src, prev = random_batch(2, 5, 4, 13)
    langs = LangContext.single(0, 1, 2)
    default, share, ls = (model(src, prev, langs.with_(route=r)) for r in (None, "share", "ls"))
    torch.testing.assert_close(default, share)
    assert (share - ls).abs().max() > 1e-4
    other = model(src, prev, LangContext.single(2, 0, 2).with_(route="share"))
    torch.testing.assert_close(share, other)  # the shared route ignores the languages
