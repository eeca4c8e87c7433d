"""Similarity search: retrieval maths, mean pooling over non-pad positions, tagging, a tiny model end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from lsnmt.data.corpus import Vocab
from lsnmt.eval import similarity
from models.build import build_transformer
from models.lang import LangContext
from tests.eval.helpers import experiment, make_world
from tests.models.helpers import tiny_config


def test_identical_embeddings_retrieve_perfectly() -> None:
    x = np.random.default_rng(0).normal(size=(50, 8))
    r = similarity.similarity_search({"en": x, "de": x.copy(), "fr": 3 * x}, "en")
    assert r["all"] == r["english_centric"] == r["zero_shot"] == 100.0
    assert set(r["accuracy"]) == {"de-en", "de-fr", "en-de", "en-fr", "fr-de", "fr-en"}


def test_random_embeddings_are_near_chance() -> None:
    rng = np.random.default_rng(0)
    n = 200
    r = similarity.similarity_search({k: rng.normal(size=(n, 16)) for k in ("en", "de", "fr", "sw")}, "en")
    assert r["all"] < 100 * 5 / n  # chance is 100/n = 0.5%


def test_english_centric_and_zero_shot_split() -> None:
    x = np.random.default_rng(1).normal(size=(30, 8))
    noise = np.random.default_rng(2).normal(size=(30, 8))
    r = similarity.similarity_search({"en": noise, "de": x, "fr": x}, "en")
    assert r["zero_shot"] == 100.0 and r["english_centric"] < 30


def test_mean_pooling_ignores_padding() -> None:
    torch.manual_seed(0)
    model = build_transformer(tiny_config(), vocab_size=20, num_languages=2).eval()
    vocab = Vocab(size=20, pad=1, eos=2, languages=("en", "de"))
    sents = [[5, 6, 7, 8, 9], [10, 11]]
    got = similarity.sentence_embeddings(model, sents, 1, 0, vocab)
    for i, s in enumerate(sents):  # one sentence at a time: no padding at all
        enc = model.encode(torch.tensor([s + [2]]), LangContext.single(1, 0, 1))
        assert np.allclose(got[i], enc.out[0].mean(0).detach().double().numpy(), atol=1e-6)
    assert np.allclose(similarity.sentence_embeddings(model, sents, 1, 0, vocab, max_tokens=1), got, atol=1e-6)


@pytest.mark.parametrize(("style", "lang", "want"), [
    ("target-prefix", "de", (["<2en>"], [])), ("target-prefix", "en", (["<2en>"], [])),
    ("source-prefix", "de", (["<de>"], [])), ("en-xx-target-xx-en-source", "en", (["<en>"], [])),
    ("src-tgt-suffix", "de", ([], ["<de>", "<2en>"])), ("none", "de", ([], [])),
])
def test_tags_are_those_of_xx_en(style: str, lang: str, want: tuple) -> None:
    assert similarity.similarity_tags(style, lang, "en") == want


def test_multiway_embeddings_of_a_tiny_model(tmp_path: Path) -> None:
    exp = experiment(multiway_max_sentences=20)
    w = make_world(tmp_path, exp, methods=("naive",))
    vocab = Vocab.load(w.bin)
    model = build_transformer(exp.model, vocab_size=vocab.size, num_languages=3, padding_idx=1).eval()
    emb = similarity.multiway_embeddings(exp, model, "ntrex", w.prepared, w.spm, vocab)
    assert sorted(emb) == ["de", "en", "fr"] and all(v.shape == (20, 16) for v in emb.values())
    r = similarity.similarity_search(emb, "en")
    assert 0 <= r["all"] <= 100 and r["sentences"] == 20
    ids = similarity.encode_multiway(exp, {"de": ["Hallo Welt"]}, w.spm, "ntrex")["de"][0]
    import sentencepiece as spm

    assert ids[0] == spm.SentencePieceProcessor(model_file=str(w.spm / "spm.model")).piece_to_id("<2en>")
