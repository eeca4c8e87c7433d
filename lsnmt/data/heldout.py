"""An in-domain test set held out of a training corpus (``data.sources[].heldout``; prepare stage).

Of the pairs a corpus keeps for one language pair after normalisation, filters and dedup, ``n`` are drawn at
random (seeded by the corpus and the pair) as the test set ``test.{corpus}``. Training then drops every pair that
shares a side with a held-out pair, in the same language: Tatoeba repeats English sentences with alternative
translations, so without this a model could have seen the reference of a held-out xx-en sentence as a
training target. The drops are counted as ``heldout_overlap`` in ``report.json``.
"""

from __future__ import annotations

import hashlib

import numpy as np

Pair = tuple[str, str]


def split_off(pairs: list[Pair], n: int, corpus: str, a: str, b: str) -> tuple[list[Pair], list[Pair], int]:
    """``(train, heldout, overlap)``: ``min(n, len(pairs) // 4)`` held-out pairs (a small corpus keeps most of
    its pairs for training) in corpus order, the other pairs
    minus those sharing a side with them, and how many of those were dropped."""
    seed = int.from_bytes(hashlib.sha256(f"{corpus}:{a}-{b}".encode()).digest()[:8], "little")
    k = min(n, len(pairs) // 4)
    chosen = set(np.random.default_rng(seed).choice(len(pairs), size=k, replace=False).tolist())
    held = [p for i, p in enumerate(pairs) if i in chosen]
    seen_a, seen_b = {x for x, _ in held}, {y for _, y in held}
    train = [p for i, p in enumerate(pairs) if i not in chosen and p[0] not in seen_a and p[1] not in seen_b]
    return train, held, len(pairs) - k - len(train)
