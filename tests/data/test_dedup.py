"""``lsnmt.data.dedup``: the compact repeat finder decides as the set of digests it replaced did."""

from __future__ import annotations

import hashlib
import random

import pytest

from lsnmt.data.dedup import Seen, chunks


def reference(texts: list[str]) -> list[bool]:
    """The former rule: a Python set of 8-byte BLAKE2b digests, first occurrence kept."""
    seen: set[bytes] = set()
    out = []
    for t in texts:
        key = hashlib.blake2b(t.encode(), digest_size=8).digest()
        out.append(key in seen)
        seen.add(key)
    return out


@pytest.mark.parametrize("size", [1, 7, 100, 1000])
def test_repeats_match_a_set_of_digests_across_chunks(size: int) -> None:
    rng = random.Random(size)
    texts = [f"w{rng.randrange(900)} ü{rng.randrange(3)}" for _ in range(5000)]
    seen, got = Seen(), []
    for chunk in chunks(texts, size):
        got += seen.repeats(chunk).tolist()
    assert got == reference(texts)
    assert len(seen) == len(set(texts)) and 0 < sum(got) < len(texts)


def test_runs_stay_few_and_sorted() -> None:
    seen = Seen()
    for chunk in chunks([str(i) for i in range(20_000)], 100):
        assert not seen.repeats(chunk).any()
    assert len(seen.runs) <= 15  # log2(20,000) + 1
    assert all((r[1:] > r[:-1]).all() for r in seen.runs)


def test_empty_chunk() -> None:
    assert Seen().repeats([]).tolist() == []


def test_chunks_end_at_a_count_or_a_number_of_characters() -> None:
    docs = ["x" * 10] * 7
    assert [len(c) for c in chunks(docs, size=3, chars=1000)] == [3, 3, 1]
    assert [len(c) for c in chunks(docs, size=100, chars=25)] == [3, 3, 1]  # 30 characters >= 25
    assert [len(c) for c in chunks([("ab", "cde")] * 4, size=100, chars=10)] == [2, 2]
