"""A synthetic multilingual translation task where language-specific knowledge is needed.

Sockeye's habit (its system tests train on synthetic "digits" data and assert a BLEU floor): every method must
learn a task whose answer is known. Here every "language" ``l`` renders one shared sequence of *concepts*
``c_1 … c_n`` (``c_i`` in ``0 … C-1``) with its own lexicon and word order::

    words_l(c) = [lex_l[c_i] for i in order_l(n)]

``lex_l`` is a fixed random injection of the concepts into language ``l``'s own block of token ids (languages
share no token, like languages with different scripts, so the source language can be read off the tokens), and
``order_l`` is the identity, the reversal (``reverse``) or, for a *scrambled* language (``scramble``), a fixed
random permutation of the ``n`` positions for each sentence length ``n``: a word order that no other language
shares. Translating ``s -> t`` therefore needs the two lexicons and the two word orders: knowledge specific to each
language, which a shared model must hold for all of them at once (the setting of LMS-FD Sec. 1 and LSL Sec. 1, at
toy scale). The lexicon alone is learnt into each language's own embeddings; the word orders of scrambled
languages must be held by the shared layers.

Token ids, as the encode stage lays them out (``meta.json``)::

    0 bos, 1 pad, 2 eos, 3 unk | 4 … 4+L-1 target tags <2l> | then L blocks of C word ids

A source sentence starts with the target language's tag (``tags: target-prefix``, LMS-FD App. A).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lsnmt.data.shards import ShardWriter
from lsnmt.io import write_json

SPECIALS = 4
"""bos, pad, eos, unk (fairseq's dictionary order)."""


@dataclass(frozen=True, kw_only=True)
class Task:
    """The languages' lexicons and word orders; :meth:`draw` draws concept sequences, :meth:`pairs` renders them."""

    languages: tuple[str, ...]
    concepts: int = 12
    """``C``: distinct concepts (words per language)."""
    reverse: tuple[str, ...] = ()
    """Languages that write their words in reverse order."""
    scramble: tuple[str, ...] = ()
    """Languages that write the ``n`` words of a sentence in their own fixed order for each length ``n``."""
    min_len: int = 3
    max_len: int = 7
    seed: int = 0
    lexicons: np.ndarray = field(init=False, repr=False)
    """``(L, C)`` token id of concept ``c`` in language ``l``."""
    orders: dict[tuple[str, int], np.ndarray] = field(init=False, repr=False)
    """``(language, n)`` -> the positions a scrambled language writes a sentence of ``n`` concepts in."""

    def __post_init__(self) -> None:
        if both := sorted(set(self.reverse) & set(self.scramble)):
            raise ValueError(f"{both[0]!r} is both reversed and scrambled: a language has one word order")
        rng = np.random.default_rng([self.seed, 7])
        base = SPECIALS + len(self.languages)
        lex = np.stack([base + i * self.concepts + rng.permutation(self.concepts)
                        for i in range(len(self.languages))])
        object.__setattr__(self, "lexicons", lex)
        orders: dict[tuple[str, int], np.ndarray] = {}
        for lang in self.scramble:  # a generator of their own: the lexicons do not change with `scramble`
            order_rng = np.random.default_rng([self.seed, 11, self.languages.index(lang)])
            orders |= {(lang, n): order_rng.permutation(n) for n in range(self.min_len, self.max_len + 1)}
        object.__setattr__(self, "orders", orders)

    @property
    def vocab_size(self) -> int:
        return SPECIALS + len(self.languages) * (1 + self.concepts)

    def tag(self, lang: str) -> int:
        """Id of the target tag ``<2lang>``."""
        return SPECIALS + self.languages.index(lang)

    def render(self, lang: str, concepts: np.ndarray) -> list[int]:
        """Language ``lang``'s words for the concept sequence ``concepts``."""
        words = self.lexicons[self.languages.index(lang)][concepts]
        if lang in self.scramble:
            return words[self.orders[lang, len(concepts)]].tolist()
        return (words[::-1] if lang in self.reverse else words).tolist()

    def draw(self, n: int, rng: np.random.Generator) -> list[np.ndarray]:
        """``n`` concept sequences of ``min_len … max_len`` concepts."""
        lengths = rng.integers(self.min_len, self.max_len + 1, size=n)
        return [rng.integers(0, self.concepts, size=int(k)) for k in lengths]

    def pairs(self, src: str, tgt: str, sentences: list[np.ndarray]) -> tuple[list[list[int]], list[list[int]]]:
        """Source (target tag first) and target token ids of ``src -> tgt`` for each concept sequence."""
        return ([[self.tag(tgt), *self.render(src, c)] for c in sentences],
                [self.render(tgt, c) for c in sentences])

    def meta(self) -> dict:
        """The encode stage's ``meta.json`` for this task."""
        return {"vocab_size": self.vocab_size, "bos": 0, "pad": 1, "eos": 2, "unk": 3,
                "languages": list(self.languages), "shards": {}}


def split_sentences(task: Task, sizes: dict[str, int], seed: int) -> dict[str, list[np.ndarray]]:
    """Disjoint concept sequences for each split (``{"train": n, "valid": n, "test": n}``): held-out
    sentences never occur in training."""
    rng = np.random.default_rng([task.seed, seed])
    seen: set[bytes] = set()
    out: dict[str, list[np.ndarray]] = {}
    for split, n in sizes.items():
        chosen: list[np.ndarray] = []
        while len(chosen) < n:
            for c in task.draw(n - len(chosen), rng):
                key = c.astype(np.int8).tobytes()
                if key not in seen:
                    seen.add(key)
                    chosen.append(c)
        out[split] = chosen
    return out


def pivot_centric(languages: tuple[str, ...]) -> list[tuple[str, str]]:
    """``(pivot, x)`` and ``(x, pivot)`` for every other language ``x``; the pivot is ``languages[0]``."""
    return [d for x in languages[1:] for d in ((languages[0], x), (x, languages[0]))]


def write_shards(task: Task, root: Path, sizes: dict[str, int], seed: int = 1,
                 extra_test: tuple[tuple[str, str], ...] = ()) -> Path:
    """The task as the encode stage writes it into ``root`` (``{split}/{src}-{tgt}.{src,tgt}`` shards and
    ``meta.json``): :func:`split_sentences` rendered in every pivot-centric direction, and in the ``extra_test``
    directions (zero-shot) in the ``test`` split."""
    for split, concepts in split_sentences(task, sizes, seed).items():
        for src, tgt in pivot_centric(task.languages) + (list(extra_test) if split == "test" else []):
            rows = task.pairs(src, tgt, concepts)
            (root / split).mkdir(parents=True, exist_ok=True)
            for side, side_rows in zip(("src", "tgt"), rows, strict=True):
                writer = ShardWriter(root / split / f"{src}-{tgt}.{side}", task.vocab_size)
                writer.add_many(side_rows)
                writer.close()
    write_json(root / "meta.json", task.meta())
    return root
