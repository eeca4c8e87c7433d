"""The encoded corpus as the trainer sees it: directions of shards, and collation into padded tensors.

``data/{exp}/bin`` (written by :mod:`lsnmt.data.encode`) holds one pair of shards
per direction and split, ``{split}/{src}-{tgt}.{src,tgt}.{bin,idx}``, with no EOS
stored, and ``meta.json`` (vocabulary size, special ids, languages).

Collation follows fairseq's ``language_pair_dataset.collate`` (right padding,
which fairseq allows with ``--left-pad-source False``)::

    src_tokens         x_1 … x_m EOS            (B, S)
    prev_output_tokens EOS y_1 … y_n            (B, T)   decoder input, shifted right
    target             y_1 … y_n EOS            (B, T)

Language ids are positions in ``meta.json``'s ``languages`` list.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from lsnmt.data.shards import Shard
from lsnmt.io import DataError
from models.lang import LangContext


@dataclass(frozen=True)
class Vocab:
    """Special ids and languages of an encoded corpus (``meta.json``)."""

    size: int
    pad: int
    eos: int
    languages: tuple[str, ...]

    @classmethod
    def load(cls, bin_dir: Path) -> Vocab:
        path = bin_dir / "meta.json"
        if not path.is_file():
            raise DataError(f"{path}: not found (run the encode stage first)")
        meta = json.loads(path.read_text(encoding="utf-8"))
        return cls(size=meta["vocab_size"], pad=meta["pad"], eos=meta["eos"], languages=tuple(meta["languages"]))

    def lang_id(self, code: str) -> int:
        if code not in self.languages:
            raise DataError(f"language {code!r} is not in meta.json languages {list(self.languages)}")
        return self.languages.index(code)


@dataclass(frozen=True, eq=False)
class Direction:
    """One translation direction of one split: two aligned shards and the language ids."""

    name: str
    """``src-tgt``, e.g. ``en-de``."""
    src_lang: int
    tgt_lang: int
    src: Shard
    tgt: Shard

    def __len__(self) -> int:
        return len(self.src)

    @property
    def src_sizes(self) -> np.ndarray:
        """Source lengths with the EOS the collater appends, ``(N,)`` int64."""
        return self.src.sizes + 1

    @property
    def tgt_sizes(self) -> np.ndarray:
        """Target lengths with EOS, ``(N,)`` int64."""
        return self.tgt.sizes + 1


def load_split(bin_dir: Path, split: str, pairs: tuple[tuple[str, str], ...], vocab: Vocab) -> list[Direction]:
    """The directions ``pairs`` of ``split``; raises :class:`DataError` naming a missing or misaligned shard."""
    out = []
    for s, t in pairs:
        prefix = bin_dir / split / f"{s}-{t}"
        for side in ("src", "tgt"):
            if not Path(f"{prefix}.{side}.idx").is_file():
                raise DataError(f"{prefix}.{side}.idx: not found (is {s}-{t} an encoded {split} direction?)")
        d = Direction(f"{s}-{t}", vocab.lang_id(s), vocab.lang_id(t),
                      Shard(f"{prefix}.src", vocab.size), Shard(f"{prefix}.tgt", vocab.size))
        if len(d.src) != len(d.tgt):
            raise DataError(f"{prefix}: {len(d.src)} source but {len(d.tgt)} target sentences")
        out.append(d)
    return out


@dataclass(frozen=True, eq=False)
class Sample:
    """One collated batch."""

    src_tokens: Tensor  # (B, S)
    prev_output_tokens: Tensor  # (B, T)
    target: Tensor  # (B, T)
    langs: LangContext
    ntokens: int
    """Non-pad target tokens (EOS included): fairseq's ``ntokens``, the loss normaliser."""

    def to(self, device: torch.device) -> Sample:
        if device.type == "cpu":
            return self
        def move(t: Tensor) -> Tensor:
            return t.to(device, non_blocking=True)

        return Sample(move(self.src_tokens), move(self.prev_output_tokens), move(self.target),
                      _langs_to(self.langs, device), self.ntokens)


def _langs_to(langs: LangContext, device: torch.device) -> LangContext:
    """``langs`` on ``device`` with its host ids (``models.lang``: the methods read the layout from them, never from
    the device): a one-direction batch is built there, a mixed one copied without blocking."""
    if langs.uniform_src is not None and langs.uniform_tgt is not None:
        return LangContext.single(langs.uniform_src, langs.uniform_tgt, len(langs), device)
    return langs.to(device)


def _gather(dirs: list[Direction], rows: np.ndarray, side: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``side`` (``"src"``/``"tgt"``) sentences of ``rows`` as a right-padded ``(n, L)`` int64 matrix (padding
    unspecified) and their lengths ``(n,)``: one vectorised gather per direction of the batch, no per-sentence
    Python (the feed builds ~700 sentences per update at 8,192 tokens, on a thread that shares the GIL with the
    training loop)."""
    n = len(rows)
    starts, lengths = np.zeros(n, np.int64), np.zeros(n, np.int64)
    groups = [(d, np.flatnonzero(rows[:, 0] == d)) for d in np.unique(rows[:, 0]).tolist()]
    for d, idx in groups:
        offsets = getattr(dirs[d], side).offsets
        starts[idx] = offsets[rows[idx, 1]]
        lengths[idx] = offsets[rows[idx, 1] + 1] - starts[idx]
    width = int(lengths.max()) if n else 0
    out = np.zeros((n, width), np.int64)
    cols = np.arange(width)
    for d, idx in groups:
        tokens = getattr(dirs[d], side).tokens
        if len(tokens):
            out[idx] = tokens[np.minimum(starts[idx, None] + cols, len(tokens) - 1)]  # (k, L)
    return out, lengths


def _pad(tokens: np.ndarray, lengths: np.ndarray, pad: int, head: int | None, tail: int | None,
         columns: int = 0) -> Tensor:
    """Right-padded ``(B, max(max_len + extra, columns))`` int64 of ``[head] + row + [tail]`` for each row of
    ``tokens``."""
    n, width = tokens.shape
    start = int(head is not None)
    out = np.full((n, max(width + start + (tail is not None), columns)), pad, dtype=np.int64)
    inside = np.arange(width) < lengths[:, None]  # (B, L)
    out[:, start:start + width] = np.where(inside, tokens, pad)
    if head is not None:
        out[:, 0] = head
    if tail is not None:
        out[np.arange(n), start + lengths] = tail
    return torch.from_numpy(out)


def collate(dirs: list[Direction], rows: np.ndarray, vocab: Vocab, pad_to: int = 0) -> Sample:
    """Tensors for the sentences ``rows`` ((n, 2) int64 of (direction index, sentence index)).

    ``pad_to`` > 0: both sides padded to the same width, the longest side's rounded up to a multiple of ``pad_to``
    (the batch's length bucket: ``lsnmt.train.batching``, "Fixed shapes"); pads change no loss or gradient."""
    src, src_len = _gather(dirs, rows, "src")
    tgt, tgt_len = _gather(dirs, rows, "tgt")
    longest = max(src.shape[1], tgt.shape[1]) + 1  # EOS
    columns = -(-longest // pad_to) * pad_to if pad_to > 0 else 0
    which = np.unique(rows[:, 0])
    if len(which) == 1:
        d = dirs[int(which[0])]
        langs = LangContext.single(d.src_lang, d.tgt_lang, len(rows))
    else:  # the languages known here, on the host, so that no method reads them from the device
        src_of = np.array([d.src_lang for d in dirs], np.int64)  # per direction: one lookup per side, no per-row
        tgt_of = np.array([d.tgt_lang for d in dirs], np.int64)  # Python
        langs = LangContext.from_ids(src_of[rows[:, 0]], tgt_of[rows[:, 0]])
    return Sample(
        src_tokens=_pad(src, src_len, vocab.pad, None, vocab.eos, columns),
        prev_output_tokens=_pad(tgt, tgt_len, vocab.pad, vocab.eos, None, columns),
        target=_pad(tgt, tgt_len, vocab.pad, None, vocab.eos, columns),
        langs=langs,
        ntokens=int(tgt_len.sum()) + len(rows),
    )
