"""Synthetic encoded corpora and tiny experiments for the training tests.

``make_bin`` writes what the encode stage writes (``train/`` and ``valid/``
shards without EOS, ``meta.json``), with random sentences of 1-12 ids drawn
from ``4 … vocab-1`` (0-3 are bos, pad, eos, unk).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from lsnmt.data.shards import ShardWriter
from lsnmt.experiment.params import Experiment
from lsnmt.io import write_json
from tests.data.helpers import experiment

LANGS = ("en", "de", "fr")
VOCAB = 40
TINY_MODEL = {"embed_dim": 16, "ffn_dim": 32, "heads": 2, "encoder_layers": 2, "decoder_layers": 2}
TRAIN_SIZES = {"en-de": 60, "en-fr": 30, "de-en": 60, "fr-en": 30}


def _sentences(rng: np.random.Generator, n: int, max_len: int) -> list[list[int]]:
    return [rng.integers(4, VOCAB, size=int(rng.integers(1, max_len + 1))).tolist() for _ in range(n)]


def write_direction(root: Path, split: str, direction: str, src: list[list[int]], tgt: list[list[int]]) -> None:
    (root / split).mkdir(parents=True, exist_ok=True)
    for side, sents in (("src", src), ("tgt", tgt)):
        w = ShardWriter(root / split / f"{direction}.{side}", VOCAB)
        w.add_many(sents)
        w.close()


def make_bin(root: Path, sizes: dict[str, int] | None = None, valid: int = 8, max_len: int = 12,
             seed: int = 0) -> Path:
    """An encoded corpus in ``root`` (returned): train directions of ``sizes``, ``valid`` pairs per direction."""
    rng = np.random.default_rng(seed)
    sizes = sizes or TRAIN_SIZES
    for direction, n in sizes.items():
        write_direction(root, "train", direction, _sentences(rng, n, max_len), _sentences(rng, n, max_len))
        write_direction(root, "valid", direction, _sentences(rng, valid, max_len), _sentences(rng, valid, max_len))
    write_json(root / "meta.json", {"vocab_size": VOCAB, "bos": 0, "pad": 1, "eos": 2, "unk": 3,
                                    "languages": list(LANGS), "shards": {}})
    return root


def tiny_experiment(model: dict[str, Any] | None = None, decode: dict[str, Any] | None = None,
                    **train: Any) -> Experiment:
    """en-centric en/de/fr, a 2+2-layer d=16 model, and fast training settings (overridable)."""
    settings = {"max_tokens": 64, "max_steps": 6, "lr": 1e-3, "warmup_steps": 4, "log_every": 2,
                "validate_every": 3, "save_every": 3, "keep_last": 2, "seed": 3, **train}
    return experiment(LANGS, model={**TINY_MODEL, **(model or {})}, train=settings, decode=decode or {})


def weights(path: Path) -> dict[str, torch.Tensor]:
    """The ``model`` entry of a checkpoint or of ``model.pt``."""
    return torch.load(path, map_location="cpu", weights_only=True)["model"]


def assert_equal_weights(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert torch.equal(a[k], b[k]), f"{k} differs"
