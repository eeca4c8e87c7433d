"""CLM (Liu et al. 2022, Sec. 3): proportions (Eq. 1), mixing (Eq. 2-3), sharing, placements, sparsity."""

from __future__ import annotations

import pytest
import torch

from models.build import build_transformer
from models.lang import LangContext
from models.ls.clm import CLMConfig, CLMModule, FeatureBank, MixFunction, top_w
from models.ls.keys import key_for, key_ids, table_size
from tests.models.helpers import assert_mixed_equals_single, tiny_config


def _model(**kw: object) -> torch.nn.Module:
    torch.manual_seed(0)
    return build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="clm",
                             method_cfg=CLMConfig(features=5, **kw)).eval()  # type: ignore[arg-type]


def _modules(model: torch.nn.Module, side: str | None = None) -> list[CLMModule]:
    return [m for n, m in model.named_modules() if isinstance(m, CLMModule) and (side is None or n.startswith(side))]


@pytest.mark.parametrize("smoothing", [0.0, 0.05, 0.5])
def test_proportions_sum_to_one_and_are_at_least_a_over_k(smoothing: float) -> None:
    m = _modules(_model(smoothing=smoothing))[0]
    assert m.proportions is not None
    p = m.proportions(torch.randn(2, 7, 16) * 10, 0)
    torch.testing.assert_close(p.sum(-1), torch.ones(2, 7))
    assert bool((p >= smoothing / 5 - 1e-7).all())


def test_module_is_eq_2_and_3() -> None:
    m = _modules(_model(encoder="mclm", decoder="mclm", key="tgt"))[0]
    h, langs = torch.randn(2, 4, 16), LangContext.single(0, 2, 2)
    assert m.proportions is not None
    P = m.proportions.weight[2]
    p = 0.95 * (h @ P).softmax(-1) + 0.05 / 5
    W = m.bank.weight  # (d, k, d)
    mixed = sum(p[..., j:j + 1] * (h @ W[:, j, :]) for j in range(5))
    torch.testing.assert_close(m(h, langs), m.norm(h + mixed))


def test_sclm_uses_one_p_for_every_pair_and_mclm_the_pairs_own() -> None:
    h = torch.randn(1, 3, 16)
    s = _modules(_model())[0]
    assert s.proportions is not None and s.proportions.weight.shape[0] == 1
    torch.testing.assert_close(s(h, LangContext.single(0, 1, 1)), s(h, LangContext.single(0, 2, 1)))
    m = _modules(_model(encoder="mclm", decoder="mclm", key="xx"))[0]
    assert m.proportions is not None and m.proportions.weight.shape[0] == 2  # 3 languages: 2 English-centric pairs
    out = {t: m(h, LangContext.single(0, t, 1)) for t in (1, 2)}
    assert not torch.allclose(out[1], out[2])
    with torch.no_grad():
        m.proportions.weight[1].copy_(m.proportions.weight[0])  # pair en-de's P := pair en-sw's
    torch.testing.assert_close(m(h, LangContext.single(0, 2, 1)), out[1])
    torch.testing.assert_close(out[1], m(h, LangContext.single(1, 0, 1)))  # xx: en-de and de-en share a P


def test_feature_maps_are_one_parameter_per_side_shared_by_all_sublayers() -> None:
    model = _model()
    enc, dec = _modules(model, "encoder"), _modules(model, "decoder")
    assert (len(enc), len(dec)) == (2 * 2, 2 * 3)
    assert len({id(m.bank.weight) for m in enc}) == 1 and len({id(m.bank.weight) for m in dec}) == 1
    assert enc[0].bank.weight is not dec[0].bank.weight
    assert isinstance(enc[0].bank, FeatureBank) and enc[0].bank.weight.shape == (16, 5, 16)
    banks = [p for p in model.parameters() if p.shape == (16, 5, 16)]
    assert len(banks) == 2  # model.parameters(): each shared bank once
    assert len({id(m.proportions) for m in enc}) == 2  # one P per layer (Sec. 3.3) ...
    assert len({id(m.proportions) for m in _modules(_model(proportion_per="sublayer"), "encoder")}) == 4


@pytest.mark.parametrize(("kw", "enc", "dec"), [
    ({}, 4, 6), ({"decoder": "none"}, 4, 0), ({"encoder": "none"}, 0, 6),
    ({"sublayers": ("ffn",)}, 2, 2), ({"encoder": "sclm", "decoder": "mclm"}, 4, 6),
])
def test_placements(kw: dict, enc: int, dec: int) -> None:
    model = _model(**kw)
    assert (len(_modules(model, "encoder")), len(_modules(model, "decoder"))) == (enc, dec)


def test_dedicated_is_sclm_encoder_and_mclm_decoder() -> None:
    model = _model(encoder="sclm", decoder="mclm", key="xx")
    e, d = _modules(model, "encoder")[0], _modules(model, "decoder")[0]
    assert e.proportions is not None and d.proportions is not None
    assert (e.proportions.weight.shape[0], d.proportions.weight.shape[0]) == (1, 2)


@pytest.mark.parametrize("w", [1, 2, 4])
def test_top_w_keeps_exactly_w_renormalised(w: int) -> None:
    p = torch.softmax(torch.randn(3, 4, 6), -1)
    q = top_w(p, w)
    assert bool(((q > 0).sum(-1) == w).all())
    torch.testing.assert_close(q.sum(-1), torch.ones(3, 4))
    model = _model(top_w=w)
    m = _modules(model)[0]
    h, langs = torch.randn(1, 3, 16), LangContext.single(0, 1, 1)
    assert m.proportions is not None
    p = top_w(m.proportions(h, 0), w)
    mixed = (p.unsqueeze(-2) @ m.bank(h)).squeeze(-2)
    torch.testing.assert_close(m(h, langs), m.norm(h + mixed))  # eval mode: pruned
    m.train()
    assert not torch.allclose(m(h, langs), m.norm(h + mixed))  # training: every feature


def _logits(model: torch.nn.Module) -> torch.Tensor:
    torch.manual_seed(1)
    src, prev = torch.randint(3, 13, (2, 6)), torch.randint(3, 13, (2, 5))
    return model(src, prev, LangContext.single(0, 1, 2))


def test_top_w_of_all_features_is_the_unsparsified_model_exactly() -> None:
    """Sec. 5.4 with ``w = k``: nothing pruned, Eq. 2 itself; the sweep's point ``w = k`` is the trained model."""
    full = _model()
    same = _model(top_w=5)
    same.load_state_dict(full.state_dict())
    assert torch.equal(_logits(same), _logits(full))
    p = torch.softmax(torch.randn(3, 4, 5), -1)
    assert top_w(p, 5) is p and top_w(p, 5, renormalise=False) is p
    pruned = _model(top_w=2)
    pruned.load_state_dict(full.state_dict())
    assert not torch.allclose(_logits(pruned), _logits(full))  # a small w changes the output


@pytest.mark.parametrize("renormalise", [True, False])
def test_top_1_mixes_only_each_tokens_largest_feature(renormalise: bool) -> None:
    """``w = 1``: ``h~ = h W_j* P^1_j*`` with ``j* = argmax_j P_j(h)``; ``P^1_j* = 1`` renormalised, else ``P_j*``."""
    m = _modules(_model(top_w=1, top_w_renormalise=renormalise))[0]
    assert m.proportions is not None
    h, langs = torch.randn(2, 3, 16), LangContext.single(0, 1, 2)
    p = m.proportions(h, 0)  # (B, T, k)
    best = p.argmax(-1)  # (B, T)
    W = m.bank.weight[:, best, :].permute(1, 2, 0, 3)  # (d, B, T, d) -> (B, T, d, d)
    weight = torch.ones_like(best, dtype=h.dtype) if renormalise else p.gather(-1, best.unsqueeze(-1)).squeeze(-1)
    mixed = (h.unsqueeze(-2) @ W).squeeze(-2) * weight.unsqueeze(-1)  # (B, T, d)
    torch.testing.assert_close(m(h, langs), m.norm(h + mixed))


@pytest.mark.parametrize(("kw", "message"), [
    ({"sweep_top_w": (2, 6)}, "sweep_top_w[1]: must be in [1, features=5], got 6"),
    ({"sweep_top_w": (2, 2)}, "sweep_top_w[1]: must be increasing, got 2 after 2"),
    ({"sweep_top_w": (1,), "encoder": "ls", "decoder": "ls"}, "sweep_top_w: needs a side with proportions"),
])
def test_sweep_top_w_is_checked(kw: dict, message: str) -> None:
    from lsnmt.typed import FieldError

    with pytest.raises(FieldError) as info:
        CLMConfig(features=5, **kw)
    assert message in str(info.value)


def test_ls_ablation_uses_one_map_per_key_and_no_gate() -> None:
    m = _modules(_model(encoder="ls", decoder="ls", key="tgt"))[0]
    assert m.proportions is None and m.bank.weight.shape == (3, 16, 16)
    h = torch.randn(2, 3, 16)
    torch.testing.assert_close(m(h, LangContext.single(0, 2, 2)), m.norm(h + h @ m.bank.weight[2]))


@pytest.mark.parametrize("cfg", [CLMConfig(features=4), CLMConfig(features=4, encoder="mclm", decoder="mclm"),
                                 CLMConfig(features=4, encoder="ls", decoder="mclm", key="xx", position="inside")])
def test_mixed_direction_batch_equals_one_direction_batches(cfg: CLMConfig) -> None:
    torch.manual_seed(0)
    model = build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="clm", method_cfg=cfg).eval()
    assert_mixed_equals_single(model)


def test_zero_init_maps_give_layer_norm_only() -> None:
    m = _modules(_model(init="zeros"))[0]
    h = torch.randn(2, 3, 16)
    torch.testing.assert_close(m(h, LangContext.single(0, 1, 2)), m.norm(h))


def test_keys_agree_between_int_and_tensor_paths() -> None:
    src = torch.tensor([0, 0, 1, 2, 1, 3])
    tgt = torch.tensor([1, 3, 0, 0, 2, 1])
    for key in ("tgt", "src", "pair", "xx", "direction"):
        ids = key_ids(key, LangContext(src, tgt), 4)  # type: ignore[arg-type]
        assert isinstance(ids, torch.Tensor)
        expected = [key_for(key, int(s), int(t), 4) for s, t in zip(src, tgt, strict=True)]  # type: ignore[arg-type]
        assert ids.tolist() == expected and max(expected) < table_size(key, 4)  # type: ignore[arg-type]
    assert len({key_for("direction", s, t, 4) for s in range(4) for t in range(4) if s != t}) == 12


def _train_step(model: torch.nn.Module) -> tuple[torch.Tensor, list[torch.Tensor], list[tuple[int, ...]]]:
    """Loss, parameter gradients and the shapes of the tensors autograd saved, for one fixed batch."""
    torch.manual_seed(1)
    src, prev = torch.randint(3, 13, (2, 6)), torch.randint(3, 13, (2, 5))
    shapes: list[tuple[int, ...]] = []

    def pack(t: torch.Tensor) -> torch.Tensor:
        shapes.append(tuple(t.shape))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        loss = model(src, prev, LangContext.single(0, 1, 2)).logsumexp(-1).sum()
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None], shapes


PRODUCTS = ((10, 5, 16), (2, 5, 5, 16), (12, 5, 16), (2, 6, 5, 16), (10, 80), (12, 80))
"""Shapes of the ``(tokens, k, d)`` products of the test batch (10 decoder, 12 encoder tokens, k = 5, d = 16)."""


@pytest.mark.parametrize("mix", ["checkpoint", "autograd"])
def test_mix_function_gives_the_loss_and_gradients_of_autograd_without_keeping_the_products(mix: str) -> None:
    """``mix: function`` (default; three bank products) against the former default ``checkpoint`` (four) and plain
    ``autograd``: the same loss and gradients (float64, to rounding), and only it and ``checkpoint`` keep none of
    the ``(tokens, k, d)`` products."""
    assert CLMConfig().mix == "function"
    runs = {}
    for m in ("function", mix):
        model = _model(mix=m).double().train()
        runs[m] = _train_step(model)
    (loss_f, grads_f, saved_f), (loss_o, grads_o, saved_o) = runs["function"], runs[mix]
    torch.testing.assert_close(loss_f, loss_o, rtol=1e-13, atol=0)
    assert len(grads_f) == len(grads_o) == sum(1 for _ in _model().parameters())
    for a, b in zip(grads_f, grads_o, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    assert not any(s in PRODUCTS for s in saved_f)
    assert any(s in PRODUCTS for s in saved_o) == (mix == "autograd")


def test_checkpoint_is_bit_identical_to_autograd() -> None:
    """``checkpoint`` (recomputing the forward's products in the backward) is memory, not maths."""
    a, b = (_train_step(_model(mix=m).train()) for m in ("checkpoint", "autograd"))
    assert torch.equal(a[0], b[0]) and all(torch.equal(x, y) for x, y in zip(a[1], b[1], strict=True))


def test_mix_function_passes_gradcheck_in_float64() -> None:
    """Eq. 2's mix ``y_n = sum_j p_nj h_n W_j``: the hand-written backward (``Z = g W'^T``; ``dh``, ``dp`` from
    ``Z``; ``dW = (h ⊗ p)^T g``) against finite differences, every input."""
    torch.manual_seed(0)
    h = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    p = torch.softmax(torch.randn(5, 3, dtype=torch.float64), -1).requires_grad_()
    w = torch.randn(4, 3, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(MixFunction.apply, (h, p, w))
    ref = (p.unsqueeze(-2) @ (h @ w.view(4, 12)).view(5, 3, 4)).squeeze(-2)
    assert torch.equal(MixFunction.apply(h, p, w), ref)  # the forward is today's (FeatureBank then the mix)


def test_mix_function_under_autocast_differentiates_at_its_dtype() -> None:
    """A bf16 autocast forward (CPU here; CUDA's is what ``custom_fwd/custom_bwd`` restore) gives every input a
    gradient in the input's dtype, close to float32's."""
    torch.manual_seed(0)
    h = torch.randn(9, 8, requires_grad=True)
    p = torch.softmax(torch.randn(9, 3), -1).requires_grad_()
    w = torch.randn(8, 3, 8, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        y = MixFunction.apply(h, p, w)
    assert y.dtype == torch.bfloat16
    y.float().sum().backward()
    low = [t.grad.clone() for t in (h, p, w)]
    for t in (h, p, w):
        t.grad = None
    MixFunction.apply(h, p, w).sum().backward()
    for a, b in zip(low, (h.grad, p.grad, w.grad), strict=True):
        assert a.dtype == torch.float32
        torch.testing.assert_close(a, b, rtol=0.05, atol=0.1)
