"""Sentencepiece round trip, tags as single pieces, and the token shards."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import sentencepiece as spm

from lsnmt.data.encode import encode, encode_lines
from lsnmt.data.prepare import prepare
from lsnmt.data.sample import sample
from lsnmt.data.shards import Shard, ShardWriter
from lsnmt.data.spm import EOS, PAD, train_spm
from lsnmt.io import iter_lines

from .helpers import experiment, raw_corpus

EN = [f"the cat number {i} sits on the mat near house {i % 7}" for i in range(200)]
DE = [f"die Katze Nummer {i} sitzt auf der Matte beim Haus {i % 7}" for i in range(200)]
FR = [f"le chat numéro {i} est assis sur le tapis près de la maison {i % 7}" for i in range(200)]


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    root = tmp_path_factory.mktemp("pipe")
    exp = experiment(spm={"vocab_size": 120, "sentences_per_language": 150, "threads": 1})
    raw = raw_corpus(root / "raw", {"en-de": (EN, DE), "en-fr": (EN[:50], FR[:50])},
                     {"en": EN[:5], "de": DE[:5], "fr": FR[:5]})
    prepare(exp, raw, root / "prepared")
    sample(exp, root / "prepared", root / "sampled")
    train_spm(exp, root / "prepared", root / "spm")
    encode(exp, root / "spm", root / "sampled", root / "prepared", root / "bin")
    return root, exp


def test_spm_round_trip_and_tags(pipeline) -> None:
    root, _ = pipeline
    sp = spm.SentencePieceProcessor(model_file=str(root / "spm" / "spm.model"))
    for line in ["the cat number 12 sits", "le chat numéro 3 est assis", "die Katze Nummer 7"]:
        assert sp.decode(sp.encode(line)) == line
    ids = encode_lines(sp, ["<2de> the cat", "the cat <en> <2de>"], {"<2de>": sp.piece_to_id("<2de>"),
                                                                   "<en>": sp.piece_to_id("<en>")})
    assert sp.id_to_piece(ids[0][0]) == "<2de>" and sp.decode(ids[0][1:]) == "the cat"
    assert [sp.id_to_piece(i) for i in ids[1][-2:]] == ["<en>", "<2de>"]
    assert (sp.pad_id(), sp.eos_id()) == (PAD, EOS)


def test_spm_balanced_sample(pipeline) -> None:
    import json

    root, _ = pipeline
    info = json.loads((root / "spm" / "symbols.json").read_text())
    # en text appears in two pairs (250 distinct lines) but is capped at 150; fr has only 50.
    assert info["sentences_per_language"] == {"en": 150, "de": 150, "fr": 50}
    assert {"<2de>", "<de>", "<2en>"} <= set(info["symbols"])


def test_shards_decode_to_the_sampled_text(pipeline) -> None:
    root, _ = pipeline
    sp = spm.SentencePieceProcessor(model_file=str(root / "spm" / "spm.model"))
    for direction in ("en-de", "fr-en"):
        for side in ("src", "tgt"):
            shard = Shard(root / "bin" / "train" / f"{direction}.{side}", sp.get_piece_size())
            text = list(iter_lines(root / "sampled" / "train" / f"{direction}.{side}"))
            assert len(shard) == len(text)
            decoded = [" ".join(sp.id_to_piece(t) for t in shard[i][:1]) + " " + sp.decode(shard[i][1:].tolist())
                       if side == "src" else sp.decode(shard[i].tolist()) for i in range(len(shard))]
            assert decoded == text


def test_eval_and_multiway_shards(pipeline) -> None:
    import json

    root, _ = pipeline
    meta = json.loads((root / "bin" / "meta.json").read_text())
    assert meta["shards"]["test/en-fr.tgt"]["sentences"] == 5
    assert meta["vocab_size"] <= 120


def test_shard_writer_reader(tmp_path: Path) -> None:
    sents = [[5, 6, 7], [], [65535], list(range(100))]
    w = ShardWriter(tmp_path / "x", vocab_size=65536)
    w.add_many(sents[:2])
    assert not (tmp_path / "x.bin").exists()  # nothing appears before close()
    w.add_many(sents[2:])
    w.close()
    shard = Shard(tmp_path / "x", vocab_size=65536)
    assert [shard[i].tolist() for i in range(len(shard))] == sents
    assert shard.sizes.tolist() == [3, 0, 1, 100]
    assert shard.tokens.dtype == np.uint16


def test_large_vocab_uses_int32(tmp_path: Path) -> None:
    w = ShardWriter(tmp_path / "y", vocab_size=250_000)
    w.add_many([[249_999, 3]])
    w.close()
    assert Shard(tmp_path / "y", vocab_size=250_000)[0].tolist() == [249_999, 3]


def test_vocabulary_too_small_for_the_corpus_is_one_line(pipeline, tmp_path: Path) -> None:
    from lsnmt.io import DataError

    root, _ = pipeline
    exp = experiment(spm={"vocab_size": 20, "sentences_per_language": 150, "threads": 1})
    with pytest.raises(DataError, match=r"prepared: spm\.vocab_size 20 is too small for this corpus: its characters "
                                        r"and the symbols need \d+ pieces"):
        train_spm(exp, root / "prepared", tmp_path / "spm")
    assert not (tmp_path / "spm").exists()
