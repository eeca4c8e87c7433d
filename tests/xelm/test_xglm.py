"""XGLM as the seed (x-elm Sec. 3.1, 5.2): a tiny randomly initialised XGLM saved locally stands for XGLM-1.7B."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
import sentencepiece as spm
import torch

from lsnmt.experiment.params import Experiment
from lsnmt.io import DataError, write_json
from lsnmt.typed import build
from lsnmt.xelm import xglm, xglm_weights
from lsnmt.xelm.config import LMConfig
from lsnmt.xelm.corpus import shard
from lsnmt.xelm.lmdata import build_lm_data, tokenizer
from lsnmt.xelm.trainer import load_lm
from models.lm import build_lm

TEXT = ["the cat sat on the mat", "die Katze sass auf der Matte", "le chat est assis sur le tapis",
        "el gato se sento en la alfombra"]
LM = LMConfig(embed_dim=16, ffn_dim=32, heads=2, layers=2, block_size=32, activation="gelu")


def _hf_model() -> type:
    from transformers import XGLMForCausalLM

    return XGLMForCausalLM


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``save_pretrained`` of a tiny XGLM and of XGLM's tokenizer over a tiny sentencepiece model."""
    root = tmp_path_factory.mktemp("xglm")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(TEXT * 50), model_writer=model, vocab_size=36,
                                   minloglevel=2)
    (root / xglm.SPM_FILE).write_bytes(model.getvalue())
    tok = xglm.tokenizer_from_spm(root / xglm.SPM_FILE)
    tok.save_pretrained(str(root))
    torch.manual_seed(0)
    from transformers import XGLMConfig, XGLMForCausalLM  # here, not at collection (1.7 s per worker)

    hf = XGLMForCausalLM(XGLMConfig(vocab_size=len(tok), d_model=16, ffn_dim=32, attention_heads=2, num_layers=2,
                                    max_position_embeddings=64, dropout=0.0))
    hf.save_pretrained(str(root))
    return root


def test_tokenizer_follows_xglms_fairseq_ids(checkpoint: Path) -> None:
    tok = xglm.load_tokenizer(str(checkpoint))
    sp = spm.SentencePieceProcessor(model_file=str(checkpoint / xglm.SPM_FILE))
    assert tok.get_piece_size() == sp.get_piece_size() + 1 + 7  # fairseq's specials, the made-up words
    for text in TEXT:
        assert tok.encode(text) == [i + 1 for i in sp.encode(text)]  # sentencepiece id + 1
    assert tok.encode(TEXT[:2]) == [tok.encode(TEXT[0]), tok.encode(TEXT[1])]
    assert tok.decode(tok.encode(TEXT[1])).strip() == TEXT[1]
    assert (tok.bos_id(), tok.pad_id(), tok.eos_id(), tok.unk_id()) == (0, 1, 2, 3)


def test_weights_give_the_same_logits_in_the_projects_lm(checkpoint: Path) -> None:
    hf = _hf_model().from_pretrained(str(checkpoint)).eval()
    ours = build_lm(LM, vocab_size=hf.config.vocab_size, padding_idx=1)
    ours.load_state_dict(xglm_weights.load_weights(str(checkpoint), LM, hf.config.vocab_size))
    ours.eval()
    tok = xglm.load_tokenizer(str(checkpoint))
    ids = torch.tensor([[2, *tok.encode(TEXT[2])]])  # </s> first, as the LM stream and XGLM do
    with torch.no_grad():
        assert torch.allclose(ours(ids), hf(ids).logits, atol=1e-5)
    with pytest.raises(DataError, match=r"xelm\.lm\.layers is 3 but .* has 2"):
        xglm_weights.load_weights(str(checkpoint), LMConfig(embed_dim=16, ffn_dim=32, heads=2, layers=3), 55)


def _exp(checkpoint: Path) -> Experiment:
    raw = {"name": "t", "data": {"languages": ["en", "de", "sw"], "train_directions": "none",
                                 "eval_directions": "none", "sources": [{"name": "m", "kind": "local", "path": "x"}]},
           "lm_data": {"languages": ["en", "de"], "targets": ["sw"], "init": "xglm", "pretrained": str(checkpoint),
                       "valid_docs": 2},
           "xelm": {"lm": {"embed_dim": 16, "ffn_dim": 32, "heads": 2, "layers": 2, "block_size": 32},
                    "seed": {"updates": 1, "batch_tokens": 32, "lr": 0.1},
                    "experts": {"updates": 1, "batch_tokens": 64, "lr": 0.1, "k": [2], "main_k": 2},
                    "ensemble": {"top_m": [1]}, "hmr": {"updates": 1, "batch_tokens": 32}}}
    return build(Experiment, raw, "experiments.t")


def test_lm_data_and_seed_from_the_checkpoint(checkpoint: Path, tmp_path: Path) -> None:
    exp = _exp(checkpoint)
    prepared = tmp_path / "prepared"
    for split in ("train", "valid"):
        (prepared / "mono" / split).mkdir(parents=True)
        for lang, text in zip(("en", "de", "sw"), TEXT, strict=False):
            (prepared / "mono" / split / f"m.{lang}").write_text(f"{text}\n{text} {split}\n", encoding="utf-8")
    assert exp.lm_data is not None
    meta = build_lm_data(exp.data, exp.spm, exp.lm_data, prepared, tmp_path / "no-spm", tmp_path / "lm")
    assert meta["tokenizer"] == f"xglm:{checkpoint}" and meta["vocab_size"] == 36 + 1 + 7
    sp = tokenizer(tmp_path / "lm")
    assert isinstance(sp, xglm.Tokenizer) and shard(tmp_path / "lm", "train", "de", 44)[0].tolist() == sp.encode(
        TEXT[1])
    info = xglm_weights.write_seed(str(checkpoint), exp.xelm.lm, meta, tmp_path / "seed")
    assert info["updates"] == 0 and info["init"] == f"xglm:{checkpoint}"
    seed = load_lm(tmp_path / "seed" / "model.pt")  # what experts branch from and lm_eval scores
    hf = _hf_model().from_pretrained(str(checkpoint)).eval()
    ids = torch.from_numpy(np.array([[2, *sp.encode(TEXT[0])]]))
    with torch.no_grad():
        assert torch.allclose(seed(ids), hf(ids).logits, atol=1e-5)
    write_json(tmp_path / "lm" / "meta.json", {**meta, "tokenizer": "spm/spm.model"})
    with pytest.raises(DataError, match="run the lm_data stage again"):
        xglm_weights.write_seed(str(checkpoint), exp.xelm.lm, {**meta, "tokenizer": "spm/spm.model"},
                                tmp_path / "seed2")


def test_offline_without_the_weights_says_what_to_fetch(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import huggingface_hub

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    for load in (lambda: xglm.load_tokenizer("facebook/xglm-1.7B"),
                 lambda: xglm_weights.load_weights("facebook/xglm-1.7B", LM, 256008)):
        with pytest.raises(DataError, match=r"hf download facebook/xglm-1\.7B --local-dir models/xglm-1\.7B.*"
                                            r"lm_data\.pretrained: models/xglm-1\.7B.*lm_data\.init: scratch"):
            load()
    with pytest.raises(Exception, match=r"init: xglm brings XGLM's tokenizer"):
        build(Experiment, {**_raw_with(vocab=True)}, "experiments.t")


def _raw_with(*, vocab: bool) -> dict:
    raw = {"name": "t", "data": {"languages": ["en", "de"], "train_directions": "none", "eval_directions": "none",
                                 "sources": [{"name": "m", "kind": "local", "path": "x"}]},
           "lm_data": {"init": "xglm"},
           "xelm": {"lm": {"embed_dim": 16, "ffn_dim": 32, "heads": 2, "layers": 2, "block_size": 8},
                    "seed": {"updates": 1, "batch_tokens": 8, "lr": 0.1},
                    "experts": {"updates": 1, "batch_tokens": 16, "lr": 0.1, "k": [2], "main_k": 2},
                    "ensemble": {"top_m": [1]}}}
    if vocab:
        raw["lm_data"]["vocab_size"] = 100
    return raw
