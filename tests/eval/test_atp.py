"""ATP (CLM Sec. 5.1, Eq. 4) and the top-5 similar languages (Tables 4, 10, 11)."""

from __future__ import annotations

import numpy as np
import torch

from lsnmt.eval.atp import atp_vectors, top_similar
from models.build import build_transformer
from models.lang import LangContext
from models.ls.clm import CLMConfig, Proportions
from tests.models.helpers import PAD, random_batch, tiny_config


def _model(**kw: object) -> torch.nn.Module:
    torch.manual_seed(0)
    return build_transformer(tiny_config(), vocab_size=13, num_languages=3, method="clm",
                             method_cfg=CLMConfig(features=4, **kw)).eval()  # type: ignore[arg-type]


def test_zero_projection_gives_uniform_atp() -> None:
    model = _model()
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, Proportions):
                m.weight.zero_()
    src, prev = random_batch(3, 6, 5, 13)
    atp = atp_vectors(model, [(src, prev, LangContext.single(0, 1, 3))], PAD)
    for side in ("encoder", "decoder"):
        np.testing.assert_allclose(atp[side], np.full(4, 0.25), atol=1e-7)


def test_hand_set_decoder_projection_per_pair() -> None:
    """mCLM decoder: P of pair en-de is one-hot on feature 0 or 1 by the sign of the first input unit."""
    model = _model(encoder="none", decoder="mclm", key="tgt", smoothing=0.0)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, Proportions):
                m.weight.zero_()
                m.weight[1, 0, 0], m.weight[1, 0, 1] = 1e8, -1e8  # tgt de: one-hot on 0 (h_0 > 0) or 1 (|h_0| > ~1e-7)
    src, prev = random_batch(2, 6, 5, 13)
    de = atp_vectors(model, [(src, prev, LangContext.single(0, 1, 2))], PAD)
    sw = atp_vectors(model, [(src, prev, LangContext.single(0, 2, 2))], PAD)
    assert set(de) == {"decoder"}
    np.testing.assert_allclose(sw["decoder"], np.full(4, 0.25), atol=1e-7)
    np.testing.assert_allclose(de["decoder"][2:], 0.0, atol=1e-7)
    np.testing.assert_allclose(de["decoder"].sum(), 1.0, rtol=1e-6)


def test_atp_is_eq_4_over_non_pad_positions() -> None:
    model = _model()
    src, prev = random_batch(3, 6, 5, 13)
    prev[1, 3:] = PAD
    seen: list[tuple[str, torch.Tensor]] = []
    handles = [m.register_forward_hook(lambda _m, _i, out, n=n: seen.append((n, out)))
               for n, m in model.named_modules() if isinstance(m, Proportions)]
    atp = atp_vectors(model, [(src, prev, LangContext.single(0, 2, 3))], PAD)
    for h in handles:
        h.remove()
    for side, mask in (("encoder", src.ne(PAD)), ("decoder", prev.ne(PAD))):
        outs = [o for n, o in seen if n.startswith(side)]
        assert len(outs) == (4 if side == "encoder" else 6)  # one call per CLM module (|N|)
        total = sum((o * mask.unsqueeze(-1)).sum((0, 1)) for o in outs)
        np.testing.assert_allclose(atp[side], (total / (int(mask.sum()) * len(outs))).numpy(), rtol=1e-5)


def test_top_similar_by_cosine() -> None:
    v = {"it": np.array([1.0, 0.1, 0]), "es": np.array([0.9, 0.12, 0]), "pt": np.array([1.0, 0.2, 0.1]),
         "ja": np.array([0, 0.1, 1.0]), "ko": np.array([0.05, 0.1, 0.9])}
    top = top_similar(v, top=2)
    assert top["it"] == ["es", "pt"] and top["ja"] == ["ko", "pt"]
    assert all(lang not in others for lang, others in top.items())
