"""An in-domain test set held out of a training corpus (``data.sources[].heldout``; prepare stage).

Of the pairs a corpus keeps for one language pair after normalisation, filters and dedup, ``n`` are drawn at
random (seeded by the corpus and the pair) as the test set ``test.{corpus}``. Training then drops every pair that
shares a side with a held-out pair, in the same language: Tatoeba repeats English sentences with alternative
translations, so without this a model could have seen the reference of a held-out xx-en sentence as a
training target. The drops are counted as ``heldout_overlap`` in ``report.json``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator

import numpy as np

Pair = tuple[str, str]


def chosen(n_pairs: int, n: int, corpus: str, a: str, b: str) -> set[int]:
    """Positions of the ``min(n, n_pairs // 4)`` held-out pairs among ``n_pairs`` (a small corpus keeps most of its
    pairs for training), drawn by a generator seeded by the corpus and the pair."""
    seed = int.from_bytes(hashlib.sha256(f"{corpus}:{a}-{b}".encode()).digest()[:8], "little")
    k = min(n, n_pairs // 4)
    return set(np.random.default_rng(seed).choice(n_pairs, size=k, replace=False).tolist())


def training_pairs(pairs: Iterable[Pair], pick: set[int], held: list[Pair]) -> Iterator[Pair]:
    """The pairs not at a position of ``pick`` that share no side with a pair of ``held``, in order."""
    seen_a, seen_b = {x for x, _ in held}, {y for _, y in held}
    for i, (x, y) in enumerate(pairs):
        if i not in pick and x not in seen_a and y not in seen_b:
            yield x, y
