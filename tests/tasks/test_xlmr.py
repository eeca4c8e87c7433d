"""LMS / LMS+FD inside XLM-R (transformers): placement, the pretrained W reused, language-wise synthesis, routes,
parameter counts in closed form, and the offline errors of the pretrained path."""

from __future__ import annotations

import copy

import huggingface_hub.constants
import pytest
import torch

from lsnmt.io import DataError
from lsnmt.tasks.config import EncoderConfig
from lsnmt.tasks.tokenizer import pretrained_tokenizer
from models.lang import LangContext
from models.ls.lms import LMSConfig, LMSFDConfig
from models.param_count import deployed_params, train_params
from models.xlmr import ScopedLinear, TaskModel, build_task_model, insert_lms, load_encoder

H, F, LAYERS, L, D = 16, 32, 2, 3, 4
TINY = EncoderConfig(init="random", hidden_size=H, layers=LAYERS, heads=2, ffn_dim=F)


def _encoder():
    torch.manual_seed(0)
    return load_encoder(TINY, vocab_size=40, dropout=0.0, max_positions=16)


def _batch(lang: int, route: str | None = None) -> tuple[torch.Tensor, torch.Tensor, LangContext]:
    ids = torch.tensor([[0, 5, 6, 7, 2], [0, 8, 9, 2, 1]])
    langs = LangContext.single(lang, lang, 2)
    return ids, ids.ne(1).long(), langs if route is None else langs.with_(route=route)


def test_lms_replaces_the_ffn_linears_and_reuses_their_weights() -> None:
    enc = _encoder()
    dense = [(layer.intermediate.dense, layer.output.dense) for layer in enc.encoder.layer]
    assert insert_lms(enc, LMSConfig(rank=D, synthesis="language"), L) == 2 * LAYERS
    for layer, (fc1, fc2) in zip(enc.encoder.layer, dense, strict=True):
        assert isinstance(layer.intermediate.dense, ScopedLinear) and isinstance(layer.output.dense, ScopedLinear)
        assert layer.intermediate.dense.inner.weight is fc1.weight and layer.output.dense.inner.bias is fc2.bias
        assert layer.intermediate.dense.inner.lms_v.shape == (L, F, D)  # Wv[l]: r x d
        assert layer.intermediate.dense.inner.lms_f.shape == (L, D, H)  # Wf[l]: d x c
        assert isinstance(layer.attention.self.query, torch.nn.Linear)  # attention untouched (where: ffn)
    att = _encoder()
    assert insert_lms(att, LMSConfig(rank=D, where="attention", every=2), L) == 4  # q k v out of layer 2 only
    assert isinstance(att.encoder.layer[1].attention.self.query, ScopedLinear)
    assert not isinstance(att.encoder.layer[0].attention.self.query, ScopedLinear)


def test_lms_model_starts_as_the_dense_one_and_is_language_wise() -> None:
    naive = TaskModel(_encoder(), 7, 0.0).eval()
    lms = copy.deepcopy(naive)
    insert_lms(lms.encoder, LMSConfig(rank=D, synthesis="language"), L)
    for lang in range(L):  # Wf = 0 at initialisation: W + Wv Wf = W
        assert torch.equal(lms(*_batch(lang)), naive(*_batch(lang)))
    with torch.no_grad():
        for layer in lms.encoder.encoder.layer:
            layer.intermediate.dense.inner.lms_f[1].normal_()
    assert torch.equal(lms(*_batch(0)), naive(*_batch(0)))  # language 0's factors are still zero
    assert not torch.allclose(lms(*_batch(1)), naive(*_batch(1)))  # language 1 now synthesises its own matrix
    with pytest.raises(RuntimeError, match="outside language_scope"):
        lms.encoder(input_ids=_batch(0)[0])


def test_lms_fd_routes_differ_only_through_their_factors() -> None:
    torch.manual_seed(1)
    model = build_task_model(_encoder(), task="qa", outputs=2, dropout=0.0, num_languages=L, method="lms_fd",
                             method_cfg=LMSFDConfig(rank=D, synthesis="language", route="share")).eval()
    with torch.no_grad():
        for layer in model.encoder.encoder.layer:
            layer.output.dense.inner.shared_f.normal_()
    share, ls = model(*_batch(2, "share")), model(*_batch(2, "ls"))
    assert not torch.allclose(share, ls)
    assert torch.equal(model(*_batch(2)), share)  # no route given: the configured one (share)
    assert torch.equal(model(*_batch(0, "share")), share)  # the shared route ignores the language


def test_parameter_counts_closed_form() -> None:
    per_lang = 2 * LAYERS * D * (H + F)  # Wv (r x d) + Wf (d x c) for fc1 and fc2 of every layer
    naive = build_task_model(_encoder(), task="ner", outputs=7, dropout=0.1, num_languages=L)
    base = train_params(naive)
    assert deployed_params(naive, L) == base
    lms = build_task_model(_encoder(), task="ner", outputs=7, dropout=0.1, num_languages=L, method="lms",
                           method_cfg=LMSConfig(rank=D, synthesis="language"))
    assert train_params(lms) == base + L * per_lang == deployed_params(lms, L)
    for route, deployed in (("share", base + per_lang), ("ls", base + L * per_lang)):
        fd = build_task_model(_encoder(), task="ner", outputs=7, dropout=0.1, num_languages=L, method="lms_fd",
                              method_cfg=LMSFDConfig(rank=D, synthesis="language", route=route))
        assert train_params(fd) == base + (L + 1) * per_lang
        assert deployed_params(fd, L) == deployed


def test_pretrained_path_offline_names_what_to_fetch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    name = "lsnmt-test/no-such-checkpoint"
    with pytest.raises(DataError, match=r"https://huggingface\.co/lsnmt-test/no-such-checkpoint.*encoder\.name"):
        load_encoder(EncoderConfig(name=name), vocab_size=250_002, dropout=0.1, max_positions=128)
    with pytest.raises(DataError, match=r"tokenizer\.json.*hf download lsnmt-test/no-such-checkpoint"):
        pretrained_tokenizer(name)


def test_pretrained_path_reads_a_local_save_pretrained_directory(tmp_path) -> None:
    from lsnmt.tasks.tokenizer import train_tokenizer

    enc = _encoder()
    enc.save_pretrained(tmp_path)
    train_tokenizer(["a small text to train on", "another line"] * 3, 40).save(str(tmp_path / "tokenizer.json"))
    tok = pretrained_tokenizer(str(tmp_path))
    loaded = load_encoder(EncoderConfig(name=str(tmp_path)), vocab_size=40, dropout=0.0, max_positions=16)
    assert tok.token_to_id("</s>") == 2
    assert all(torch.equal(a, b) for a, b in zip(loaded.state_dict().values(), enc.state_dict().values(),
                                                 strict=True))
    with pytest.raises(DataError, match="do not belong together"):
        load_encoder(EncoderConfig(name=str(tmp_path)), vocab_size=41, dropout=0.0, max_positions=16)
