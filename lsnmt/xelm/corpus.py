"""The LM's view of ``data/{exp}/lm``: document selections and the token stream they are trained on.

Training follows fairseq / metaseq language modelling with ``break_mode: none``: the selected documents, in a
seeded random order, form one stream ``EOS d_1 EOS d_2 EOS ...`` (EOS doubles as the document separator and
as XGLM's beginning-of-sequence symbol), cut into blocks of ``B + 1`` tokens that overlap by one; block b is
``stream[bB : bB + B + 1]``, its first ``B`` tokens the input and its last ``B`` the targets. Each epoch
visits the blocks in a new seeded order; the cursor ``(epoch, offset)`` is saved with the checkpoints. Shards
stay memory-mapped: memory grows with the number of documents, not tokens.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from lsnmt.data.shards import Shard
from lsnmt.io import DataError


def shard(lm_dir: Path, split: str, lang: str, vocab_size: int) -> Shard:
    prefix = lm_dir / split / lang
    if not Path(f"{prefix}.idx").is_file():
        raise DataError(f"{prefix}.idx: not found (is {lang!r} an x-elm language of this experiment?)")
    return Shard(prefix, vocab_size)


def doc_sizes(lm_dir: Path, split: str, lang: str) -> np.ndarray:
    """Tokens of each document of ``lang`` (without EOS), ``(n,)`` int64."""
    return np.diff(np.fromfile(lm_dir / split / f"{lang}.idx", dtype=np.int64))


@dataclass(frozen=True)
class Selection:
    """Documents of some languages: ``{lang: indices into that language's training shard}``."""

    docs: dict[str, np.ndarray]

    @classmethod
    def languages(cls, lm_dir: Path, langs: list[str] | tuple[str, ...]) -> Selection:
        return cls({x: np.arange(len(doc_sizes(lm_dir, "train", x))) for x in langs})

    def summary(self, lm_dir: Path) -> dict[str, dict[str, int]]:
        """Documents and tokens per language (what ``data.json`` of a trained model records)."""
        out = {}
        for lang, idx in self.docs.items():
            sizes = doc_sizes(lm_dir, "train", lang)
            out[lang] = {"docs": len(idx), "tokens": int(sizes[idx].sum())}
        return out


class TokenStream:
    """Blocks of ``block + 1`` tokens over the selected documents (see the module docstring)."""

    def __init__(self, lm_dir: Path, selection: Selection, *, vocab_size: int, eos: int, block: int,
                 seed: int) -> None:
        self.block, self.eos, self.seed = block, eos, seed
        langs = sorted(selection.docs)
        self.shards = [shard(lm_dir, "train", x, vocab_size) for x in langs]
        which = np.concatenate([np.full(len(selection.docs[x]), i) for i, x in enumerate(langs)]).astype(np.int64)
        index = np.concatenate([selection.docs[x] for x in langs]).astype(np.int64)
        order = np.random.default_rng([seed, 0]).permutation(len(index))
        self.which, self.index = which[order], index[order]
        lengths = np.ones(len(order), dtype=np.int64)  # the EOS before each document
        for w, s in enumerate(self.shards):
            mask = self.which == w
            lengths[mask] += s.sizes[self.index[mask]]
        self.ends = np.cumsum(lengths)
        total = int(self.ends[-1]) if len(self.ends) else 0
        self.n_blocks = (total - 1) // block
        if self.n_blocks < 1:
            raise DataError(f"{total} tokens are fewer than one block of {block + 1}")
        self.epoch, self.offset = 0, 0
        self._perm = self._permutation(0)

    def _permutation(self, epoch: int) -> np.ndarray:
        return np.random.default_rng([self.seed, 1, epoch]).permutation(self.n_blocks)

    def tokens(self, start: int, stop: int) -> np.ndarray:
        """Stream positions ``[start, stop)``."""
        out = np.empty(stop - start, dtype=np.int64)
        j = int(np.searchsorted(self.ends, start, side="right"))
        pos = start
        while pos < stop:
            doc_start = int(self.ends[j - 1]) if j else 0
            doc = np.concatenate([[self.eos], self.shards[self.which[j]][int(self.index[j])]])
            take = doc[pos - doc_start: min(stop, int(self.ends[j])) - doc_start]
            out[pos - start: pos - start + len(take)] = take
            pos += len(take)
            j += 1
        return out

    def block_tokens(self, b: int) -> np.ndarray:
        return self.tokens(b * self.block, b * self.block + self.block + 1)

    def take(self, n: int) -> np.ndarray:
        """The next ``n`` blocks, ``(n, block + 1)`` int64, advancing the cursor (a new epoch reshuffles)."""
        rows = []
        while len(rows) < n:
            if self.offset == self.n_blocks:
                self.epoch, self.offset = self.epoch + 1, 0
                self._perm = self._permutation(self.epoch)
            rows.append(self.block_tokens(int(self._perm[self.offset])))
            self.offset += 1
        return np.stack(rows)

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self.epoch, "offset": self.offset}

    def load_state_dict(self, state: dict[str, int]) -> None:
        self.epoch, self.offset = int(state["epoch"]), int(state["offset"])
        self._perm = self._permutation(self.epoch)


def valid_docs(lm_dir: Path, lang: str, vocab_size: int) -> list[np.ndarray]:
    """The validation documents of ``lang`` as token arrays (no EOS)."""
    s = shard(lm_dir, "valid", lang, vocab_size)
    return [s[i].astype(np.int64) for i in range(len(s))]
