"""The LM token stream: documents separated by EOS, blocks overlapping by one token, resumable cursor."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lsnmt.xelm.corpus import Selection, TokenStream, shard

from .helpers import EOS, VOCAB, make_lm_dir


def test_stream_is_the_documents_joined_by_eos(tmp_path: Path) -> None:
    lm = make_lm_dir(tmp_path)
    sel = Selection({"en": np.array([0, 3, 5]), "de": np.array([1])})
    stream = TokenStream(lm, sel, vocab_size=VOCAB, eos=EOS, block=4, seed=7)
    docs = {("en", i): shard(lm, "train", "en", VOCAB)[i] for i in (0, 3, 5)} | {("de", 1): shard(lm, "train", "de",
                                                                                                     VOCAB)[1]}
    order = [(sorted(sel.docs)[w], int(i)) for w, i in zip(stream.which, stream.index, strict=True)]
    expected = np.concatenate([np.concatenate([[EOS], docs[d]]) for d in order])
    assert sorted(order) == sorted(docs)
    assert np.array_equal(stream.tokens(0, len(expected)), expected)
    assert stream.n_blocks == (len(expected) - 1) // 4
    b = stream.block_tokens(1)
    assert len(b) == 5 and np.array_equal(b, expected[4:9])  # block b covers [bB, bB + B + 1)


def test_epoch_visits_every_block_once_and_resumes(tmp_path: Path) -> None:
    lm = make_lm_dir(tmp_path)
    sel = Selection.languages(lm, ["en", "de"])
    a = TokenStream(lm, sel, vocab_size=VOCAB, eos=EOS, block=8, seed=1)
    first = a.take(a.n_blocks)
    assert len({row.tobytes() for row in first}) == len({a.block_tokens(b).tobytes() for b in range(a.n_blocks)})
    assert a.state_dict() == {"epoch": 0, "offset": a.n_blocks}
    nxt = a.take(3)
    assert a.state_dict()["epoch"] == 1
    b = TokenStream(lm, sel, vocab_size=VOCAB, eos=EOS, block=8, seed=1)
    b.load_state_dict({"epoch": 0, "offset": a.n_blocks})
    assert np.array_equal(b.take(3), nxt)
