"""The forwards that stopped reading the device give what they gave: outputs, auxiliary losses and gradients of
the new forward against the old one (``tests/models/reference_ls.py``) on fixed weights in fp32, per changed
method (LSL's routing, FD's language experts, CLSR's target projections, Switch's dispatch, the per-target
decoder and its padding mask), on mixed-direction batches with padding, in training and eval mode.
"""

from __future__ import annotations

import pytest
import torch

import models.tiles
from lsnmt.train.loss import default_criterion
from models.build import build_transformer
from models.lang import LangContext
from models.ls import criterion, lsl
from models.ls.clsr import LangProjection
from models.ls.fd import FDFFN
from models.ls.switch import SwitchFFN
from models.transformer import Decoder
from tests.models import reference_ls as ref
from tests.models.helpers import PAD, collated, method_model, tiny_config

CASES: dict[str, tuple[str | None, dict[str, object]]] = {
    "naive": (None, {}),
    "lsl-layer": ("lsl", {}),
    "lsl-ffn": ("lsl", {"components": "ffn"}),
    "lsl-attention": ("lsl", {"components": "attention"}),
    "fd-ls": ("fd", {"route": "ls"}),
    "clsr": ("clsr", {}),
    "clsr-star": ("clsr", {"share": False}),
    "switch": ("switch", {"experts": 4, "capacity_factor": 1.0, "eval_capacity_fraction": 1.0}),
}
MIXED = ([0, 1, 2, 0, 1, 2], [1, 0, 0, 2, 2, 1])


def old_forwards(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lsl.LanguageSpecific, "forward", ref.lsl_forward)
    monkeypatch.setattr(lsl.SearchLayer, "forward", ref.search_forward)
    monkeypatch.setattr(FDFFN, "forward", ref.fd_forward)
    monkeypatch.setattr(LangProjection, "forward", ref.lang_projection_forward)
    monkeypatch.setattr(SwitchFFN, "forward", ref.switch_forward)
    monkeypatch.setattr(Decoder, "forward", ref.decoder_forward)


def perturbed_norms(model: torch.nn.Module) -> torch.nn.Module:
    """``model`` with every LayerNorm's weight and bias moved off 1 and 0, differently per language's copy (the
    grouped forwards apply each row's own)."""
    g = torch.Generator().manual_seed(5)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.LayerNorm):
                m.weight.add_(0.2 * torch.randn(m.weight.shape, generator=g))
                m.bias.add_(0.2 * torch.randn(m.bias.shape, generator=g))
    return model


def run(model: torch.nn.Module, kind: str | None, langs: LangContext, train: bool) -> dict[str, torch.Tensor]:
    """Logits, loss, auxiliary loss and every gradient of one forward-backward on the fixed batch."""
    batch = collated((langs.src.tolist(), langs.tgt.tolist()))
    model.train(train)
    model.zero_grad(set_to_none=True)
    logits = model(batch.src_tokens, batch.prev_output_tokens, batch.langs)
    loss, _, ntok = (criterion(kind) or default_criterion)(model, batch, 0.1, PAD)
    aux = model.aux_loss()
    (loss + (aux * ntok if aux is not None else 0)).backward()
    out = {"logits": logits.detach(), "loss": loss.detach()}
    if aux is not None:
        out["aux"] = aux.detach()
    # an expert no token reached: no gradient before (not called), zero now (called on empty slots)
    out.update({f"grad {n}": torch.zeros_like(p) if p.grad is None else p.grad for n, p in model.named_parameters()})
    return out


def assert_same(new: dict[str, torch.Tensor], old: dict[str, torch.Tensor]) -> None:
    assert new.keys() == old.keys()
    for name in new:
        torch.testing.assert_close(new[name], old[name], msg=lambda m, name=name: f"{name}: {m}")


@pytest.mark.parametrize("layout", ["segments", "tiles"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
@pytest.mark.parametrize("decoder", ["shared", "per-target"])
@pytest.mark.parametrize("case", CASES)
def test_new_forward_equals_the_old_one(case: str, decoder: str, train: bool, layout: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Both layouts of the grouped modules (``models/tiles.py``): a CPU's segments and a GPU's tiles."""
    monkeypatch.setattr(models.tiles, "CPU_LAYOUT", layout)
    kind, cfg = CASES[case]
    model = perturbed_norms(method_model(kind, decoder, **cfg))
    langs = LangContext(torch.tensor(MIXED[0]), torch.tensor(MIXED[1]))
    new = run(model, kind, langs, train)
    old_forwards(monkeypatch)
    assert_same(new, run(model, kind, langs, train))


def test_search_layers_equal_the_old_routing(monkeypatch: pytest.MonkeyPatch) -> None:
    """LSL's architecture search (Eq. 1: a shared layer and a source- and a target-indexed one per layer)."""
    from models.config.lsl import LSLSearchConfig

    torch.manual_seed(0)
    factories = lsl.search_factories(LSLSearchConfig(mixing_init=(0.3, -0.2, 0.1)))
    model = perturbed_norms(build_transformer(tiny_config(), vocab_size=13, num_languages=3, factories=factories))
    langs = LangContext(torch.tensor(MIXED[0]), torch.tensor(MIXED[1]))
    new = run(model, None, langs, True)
    old_forwards(monkeypatch)
    assert_same(new, run(model, None, langs, True))
