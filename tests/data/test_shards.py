"""Shards carry their checksums and are checked once, when opened: damage is one line naming the file."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from lsnmt.data import shards
from lsnmt.data.corpus import Vocab, collate, load_split
from lsnmt.data.shards import Shard, ShardWriter
from lsnmt.io import DataError
from tests.train.helpers import make_bin

ROWS = [[5, 6, 7], [8], [9, 10, 11, 12], [13, 14]]


def write(prefix: Path, rows: list[list[int]] = ROWS, vocab: int = 40) -> Path:
    w = ShardWriter(prefix, vocab)
    w.add_many(rows)
    w.close()
    return prefix


def test_the_checksums_are_sha256sum_lines_of_both_files(tmp_path: Path) -> None:
    prefix = write(tmp_path / "en-de.src")
    lines = (tmp_path / "en-de.src.sha256").read_text().splitlines()
    assert lines == [f"{hashlib.sha256((tmp_path / n).read_bytes()).hexdigest()}  {n}"
                     for n in ("en-de.src.bin", "en-de.src.idx")]
    assert [Shard(prefix, 40)[i].tolist() for i in range(4)] == ROWS


def _flip(path: Path, at: int) -> None:
    raw = bytearray(path.read_bytes())
    raw[at] ^= 1
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize(("damage", "expected"), [
    (lambda p: _flip(p.with_suffix(".src.bin"), 3), r"en-de\.src\.bin: damaged, its sha256 differs from en-de\.src"
                                                     r"\.sha256 \(rerun the stage that wrote "),
    (lambda p: _flip(p.with_suffix(".src.idx"), 9), r"en-de\.src\.idx: damaged, its sha256 differs"),
    (lambda p: p.with_suffix(".src.bin").write_bytes(p.with_suffix(".src.bin").read_bytes()[:7]),
     r"en-de\.src\.bin: truncated \(40 index bytes, 7 id bytes"),
    (lambda p: p.with_suffix(".src.bin").unlink(), r"en-de\.src\.bin: not found"),
], ids=["bit-in-ids", "bit-in-index", "truncated", "missing"])
def test_a_damaged_shard_is_one_line_naming_the_file(tmp_path: Path, damage, expected: str) -> None:
    prefix = write(tmp_path / "en-de.src")
    if "truncated" in expected:
        shards.sums_path(prefix).unlink()  # the structural check, without the checksum that would catch it first
    damage(prefix)
    with pytest.raises(DataError, match=expected) as info:
        Shard(prefix, 40)
    assert "\n" not in str(info.value)


def test_ids_beyond_the_vocabulary_are_refused_when_opened(tmp_path: Path) -> None:
    """Encoded with a larger vocabulary (same dtype, intact checksums): the embedding's IndexError, or a GPU's
    device-side assert, named no file."""
    prefix = write(tmp_path / "en-de.tgt", [[5, 6], [39, 41, 7]], vocab=1000)
    with pytest.raises(DataError, match=r"en-de\.tgt\.bin: id 41 is not below the vocabulary size 40"):
        Shard(prefix, 40)


def test_an_index_that_does_not_match_is_refused(tmp_path: Path) -> None:
    prefix = write(tmp_path / "x")
    offsets = np.fromfile(f"{prefix}.idx", dtype=np.int64)
    offsets[[1, 2]] = offsets[[2, 1]]  # decreasing: sentence 2 would have a negative length
    offsets.tofile(f"{prefix}.idx")
    shards.sums_path(prefix).unlink()
    with pytest.raises(DataError, match=r"x\.idx does not match x\.bin"):
        Shard(prefix, 40)


def test_each_shard_is_checked_once_not_per_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = make_bin(tmp_path / "bin")
    scans: list[Path] = []
    real = shards._scan_ids
    monkeypatch.setattr(shards, "_scan_ids", lambda path, dtype: scans.append(path) or real(path, dtype))
    vocab = Vocab.load(bin_dir)
    dirs = load_split(bin_dir, "train", (("en", "de"), ("de", "en")), vocab)
    for _ in range(3):
        for d in range(len(dirs)):
            collate(dirs, np.array([[d, i] for i in range(len(dirs[d]))]), vocab)
    assert len(scans) == 4 == len(set(scans))  # two directions, two sides
