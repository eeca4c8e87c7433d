"""Compact, memory-mappable token shards, checksummed and checked when opened.

A shard is three files: ``NAME.bin`` holds the token ids of every sentence
back to back (uint16 when the vocabulary fits, else int32), ``NAME.idx``
holds n+1 int64 offsets, so sentence i is ``bin[idx[i]:idx[i+1]]``, and
``NAME.sha256`` the sha256 of both (``sha256sum -c NAME.sha256`` checks them;
written with them, inside the stage's temporary folder). No EOS is stored; the
batcher adds it. Reading maps both files, so memory stays flat however large
the corpus.

:class:`Shard` checks a shard once, when it is opened, never per batch: both checksums, the index (``idx[0] = 0``,
non-decreasing, ``idx[n]`` = the number of ids) and every id below the vocabulary size (an id beyond it was an
``IndexError`` in the embedding, on a GPU a device-side assert that names no file). A failed check is one
:class:`~lsnmt.io.DataError` line naming the file. The check reads the shard once (hashing runs at disk speed);
a shard written before checksums were stored is checked without them, with a warning.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import os
from pathlib import Path

import numpy as np

from lsnmt.io import DataError, atomic_write

log = logging.getLogger(__name__)

CHUNK = 1 << 24
"""Bytes read at a time when a shard is checked."""


def dtype_for(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16) if vocab_size <= np.iinfo(np.uint16).max + 1 else np.dtype(np.int32)


def sums_path(prefix: str | Path) -> Path:
    """``prefix.sha256``: the checksums of ``prefix.bin`` and ``prefix.idx``."""
    return Path(f"{prefix}.sha256")


class ShardWriter:
    """Append sentences (lists of ids) to ``prefix.bin``/``prefix.idx``; files (and ``prefix.sha256``) appear on
    ``close()`` only."""

    def __init__(self, prefix: str | Path, vocab_size: int) -> None:
        self.prefix = Path(prefix)
        self.dtype = dtype_for(vocab_size)
        self._tmp_bin = self.prefix.with_name(f".{self.prefix.name}.bin.tmp")
        self._tmp_idx = self.prefix.with_name(f".{self.prefix.name}.idx.tmp")
        self._bin = open(self._tmp_bin, "wb")
        self._idx = open(self._tmp_idx, "wb")
        self._sums = {"bin": hashlib.sha256(), "idx": hashlib.sha256()}
        self._write("idx", np.zeros(1, dtype=np.int64).tobytes())
        self.sentences = 0
        self.tokens = 0

    def _write(self, which: str, data: bytes) -> None:
        (self._bin if which == "bin" else self._idx).write(data)
        self._sums[which].update(data)

    def add_many(self, sentences: list[list[int]]) -> None:
        """Append a chunk; memory use is that of the chunk, whatever the shard's size."""
        if not sentences:
            return
        lengths = np.fromiter((len(s) for s in sentences), dtype=np.int64, count=len(sentences))
        flat = np.fromiter(itertools.chain.from_iterable(sentences), dtype=self.dtype, count=int(lengths.sum()))
        self._write("bin", flat.tobytes())
        self._write("idx", (self.tokens + np.cumsum(lengths)).tobytes())
        self.sentences += len(sentences)
        self.tokens += int(lengths.sum())

    def close(self) -> None:
        self._bin.close()
        self._idx.close()
        os.replace(self._tmp_bin, f"{self.prefix}.bin")
        os.replace(self._tmp_idx, f"{self.prefix}.idx")
        with atomic_write(sums_path(self.prefix)) as fh:
            fh.writelines(f"{h.hexdigest()}  {self.prefix.name}.{which}\n" for which, h in self._sums.items())

    def __len__(self) -> int:
        return self.sentences


def read_sums(prefix: str | Path) -> dict[str, str] | None:
    """``{"bin": hex, "idx": hex}`` from ``prefix.sha256``; ``None`` where the shard has none."""
    path = sums_path(prefix)
    if not path.is_file():
        return None
    sums = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        digest, _, name = line.partition("  ")
        sums[name.rsplit(".", 1)[-1]] = digest
    if set(sums) != {"bin", "idx"}:
        raise DataError(f"{path}: not the checksums of a shard (expected the .bin and .idx lines)")
    return sums


def _sha256(path: Path) -> str:
    """sha256 of the file ``path``, read in blocks."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _scan_ids(path: Path, dtype: np.dtype) -> tuple[str, int]:
    """sha256 and largest id (-1: none) of the ids file ``path``, in one read."""
    h, top, tail = hashlib.sha256(), -1, b""
    with open(path, "rb") as fh:
        while chunk := fh.read(CHUNK):
            h.update(chunk)
            data, cut = tail + chunk, (len(tail) + len(chunk)) // dtype.itemsize * dtype.itemsize
            data, tail = data[:cut], data[cut:]
            if data:
                top = max(top, int(np.frombuffer(data, dtype=dtype).max()))
    return h.hexdigest(), top


class Shard:
    """Read-only view of a shard: ``len(shard)``, ``shard[i]`` (np array), ``shard.sizes``; checked on opening
    (module docstring), raising :class:`~lsnmt.io.DataError`."""

    def __init__(self, prefix: str | Path, vocab_size: int) -> None:
        self.prefix = Path(prefix)
        dtype = dtype_for(vocab_size)
        bin_path, idx_path = Path(f"{prefix}.bin"), Path(f"{prefix}.idx")
        for path in (bin_path, idx_path):
            if not path.is_file():
                raise DataError(f"{path}: not found ({self._remedy})")
        sums = read_sums(prefix)
        if sums is None:
            log.warning("%s: no checksums (written before they were stored): checked without them", sums_path(prefix))
        digest, top = _scan_ids(bin_path, dtype)
        if sums is not None and digest != sums["bin"]:
            raise DataError(f"{bin_path}: damaged, its sha256 differs from {sums_path(prefix).name} ({self._remedy})")
        if sums is not None and _sha256(idx_path) != sums["idx"]:
            raise DataError(f"{idx_path}: damaged, its sha256 differs from {sums_path(prefix).name} ({self._remedy})")
        self.offsets = self._offsets(idx_path, bin_path, dtype)
        if top >= vocab_size:
            raise DataError(f"{bin_path}: id {top} is not below the vocabulary size {vocab_size} (encoded with "
                            f"another vocabulary? {self._remedy})")
        self.tokens = (np.memmap(bin_path, dtype=dtype, mode="r") if os.path.getsize(bin_path)
                       else np.zeros(0, dtype=dtype))

    @property
    def _remedy(self) -> str:
        return f"rerun the stage that wrote {self.prefix.parent}"

    def _offsets(self, idx_path: Path, bin_path: Path, dtype: np.dtype) -> np.ndarray:
        """The offsets of ``idx_path``, checked against themselves and against ``bin_path``'s length."""
        nbytes, ibytes = os.path.getsize(bin_path), os.path.getsize(idx_path)
        if ibytes < 8 or ibytes % 8 or nbytes % dtype.itemsize:
            raise DataError(f"{idx_path if ibytes < 8 or ibytes % 8 else bin_path}: truncated ({ibytes} index "
                            f"bytes, {nbytes} id bytes; {self._remedy})")
        offsets = np.fromfile(idx_path, dtype=np.int64)
        if offsets[0] != 0 or offsets[-1] != nbytes // dtype.itemsize or (offsets[1:] < offsets[:-1]).any():
            raise DataError(f"{idx_path} does not match {bin_path.name} (offsets from {offsets[0]} to {offsets[-1]} "
                            f"for {nbytes // dtype.itemsize} ids; {self._remedy})")
        return offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> np.ndarray:
        return np.asarray(self.tokens[self.offsets[i]:self.offsets[i + 1]])

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)
