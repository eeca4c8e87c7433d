"""CLSR / CLSR* baseline (Zhang et al. 2021): sharing, hard gates at inference, budget loss, noise ramp."""

from __future__ import annotations

import torch

from models.build import build_transformer
from models.lang import LangContext
from models.ls.clsr import CLSRConfig, CLSRProjection
from tests.models.helpers import random_batch, tiny_config


def _model(**kw: object) -> torch.nn.Module:
    torch.manual_seed(0)
    return build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="clsr",
                             method_cfg=CLSRConfig(**kw))  # type: ignore[arg-type]


def _projections(model: torch.nn.Module) -> list[CLSRProjection]:
    return [m for m in model.modules() if isinstance(m, CLSRProjection)]


def test_clsr_shares_language_matrices_per_stack_and_clsr_star_does_not() -> None:
    shared, star = _projections(_model()), _projections(_model(share=False))
    assert len(shared) == len(star) == 2 * 2 + 2 * 3  # encoder self+ffn, decoder self+cross+ffn
    assert len({id(p.lang) for p in shared}) == 2 and len({id(p.lang) for p in star}) == 10
    assert len({id(p.gate) for p in shared}) == 10  # one gate per sublayer either way
    assert len(_projections(_model(sublayers=("self", "ffn")))) == 8


def test_budget_loss_is_mean_gate_minus_p() -> None:
    model = _model(budget=0.3).train()
    src, prev = random_batch(2, 5, 4, 13)
    model(src, prev, LangContext.single(0, 1, 2))
    budget = next(iter(_projections(model))).budget
    assert len(budget.stats) == 2 * 2 + 2 * 3  # every gate of the forward
    real_src = int(src.ne(1).sum())  # random_batch pads sources (id 1); decoder inputs are unpadded
    total = sum(float((g.detach() * ~pad.unsqueeze(-1)).sum()) if pad is not None else float(g.detach().sum())
                for g, pad in budget.stats.values())  # each gate on its own real tokens
    count = 2 * 2 * real_src + 2 * 3 * 2 * 4  # encoder: 2 layers x (self, ffn); decoder: 2 x (self, cross, ffn) x 2x4
    mean = total / count
    summed, counted = budget.totals()  # grouped by padding mask: the same sum, the same count
    assert float(counted) == count
    torch.testing.assert_close(summed.detach(), torch.tensor(total), rtol=1e-6, atol=1e-6)
    aux = model.aux_loss()
    assert aux is not None
    torch.testing.assert_close(aux.detach(), torch.tensor(abs(mean - 0.3)))


def test_budget_leaves_padding_out() -> None:
    """The budget's mean gate is over real tokens only: a padded position's gate value (here forced to 1 on the
    pads, 0 elsewhere) does not count, on attention and feed-forward sublayers alike (Zhang et al. 2021: the
    budget constrains the routing of tokens; a pad is none)."""
    model = _model(budget=0.3).train()
    src, prev = random_batch(2, 5, 4, 13)
    prev[1, 2:] = 1  # pad the second target too
    pads = {"enc": src.eq(1), "dec": prev.eq(1)}
    assert pads["enc"].any() and pads["dec"].any()
    for name, proj in ((n, m) for n, m in model.named_modules() if isinstance(m, CLSRProjection)):
        side = "enc" if name.startswith("encoder") else "dec"
        proj.gate.forward = (lambda mask: lambda h, progress: mask.unsqueeze(-1).to(h.dtype))(pads[side])
    model(src, prev, LangContext.single(0, 1, 2))
    aux = model.aux_loss()
    assert aux is not None
    torch.testing.assert_close(aux.detach(), torch.tensor(0.3))  # |0 - 0.3|: every real gate is 0


def test_hard_gates_at_inference_and_gate_formula() -> None:
    model = _model().eval()
    proj = _projections(model)[0]
    h = torch.randn(2, 3, 16)
    g = proj.gate(h, None)
    assert set(g.unique().tolist()) <= {0.0, 1.0}
    langs = LangContext.single(0, 2, 2)
    expected = g * (h @ proj.lang.weight[2].T) + (1 - g) * proj.shared(h, langs)
    torch.testing.assert_close(proj(h, langs), expected)


def test_noise_ramps_with_training_progress() -> None:
    model = _model().train()
    gate = _projections(model)[0].gate
    h = torch.randn(4, 3, 16)
    torch.manual_seed(1)
    a = gate(h, 0.0)
    torch.testing.assert_close(a, gate(h, None))  # no noise at the start
    torch.testing.assert_close(a, torch.sigmoid(gate.net(h)))
    torch.manual_seed(1)
    late = gate(h, 1.0)
    torch.manual_seed(1)
    expected = torch.sigmoid(gate.net(h) + 5.0 * torch.randn_like(a))
    torch.testing.assert_close(late, expected)
