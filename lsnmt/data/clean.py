"""Length-ratio cleaning in SentencePiece pieces: ``sample.max_piece_ratio``, applied by the ``sample`` stage.

A training pair (x, y) is kept when both sides have at least one piece and

    max(|x|, |y|) <= r * min(|x|, |y|)          |x|: SentencePiece pieces of x, tags left out

which is M2M-100's length-ratio cleaning (fairseq ``examples/m2m_100/README.md``: after SentencePiece, Moses'
``clean-corpus-n.perl --ratio 3`` over the pieces, before binarising), the preprocessing LSL Sec. 4 uses ("the
M2M-100 scripts"). LMS-FD and CLM describe no ratio filter (OPUS-100 is used as released), so their experiments
leave it off (``None``).

Why pieces, not characters: one Chinese or Japanese character often carries a word, so a character ratio drops
ordinary pairs. On FLORES-200 dev + devtest (2,009 real translations per language), a character ratio of 3 (both
sides >= 10 characters, this pipeline's former ``prepare`` filter) dropped 1,219 of the en-zh pairs, 131 en-ja and
15 en-ko; a piece ratio of 3 under a 16K unigram model trained on FLORES-200 dev and NTREX dropped none of them
(Tatoeba's en-zh / en-ja / en-ko test pairs: 10 of 10,390, 2 of 13,862, 2 of 2,400). The pieces come from the
experiment's own model (``data/{exp}/spm``), so the filter runs after the ``spm`` stage, as M2M-100's does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import sentencepiece as spm

from lsnmt.data.config import SampleView
from lsnmt.data.encode import split_tags
from lsnmt.io import DataError, iter_lines

CHUNK = 50_000


def load(spm_dir: Path) -> tuple[spm.SentencePieceProcessor, dict[str, int]]:
    """The experiment's sentencepiece model and its tag symbols (``spm.model``, ``symbols.json``)."""
    sp = spm.SentencePieceProcessor(model_file=str(spm_dir / "spm.model"))
    names = json.loads((spm_dir / "symbols.json").read_text(encoding="utf-8"))["symbols"]
    return sp, {name: sp.piece_to_id(name) for name in names}


def _chunks(path: Path) -> Iterator[list[str]]:
    chunk: list[str] = []
    for line in iter_lines(path):
        chunk.append(line)
        if len(chunk) == CHUNK:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def piece_counts(sp: spm.SentencePieceProcessor, lines: list[str], symbols: dict[str, int],
                 threads: int = 1) -> np.ndarray:
    """``(n,)`` pieces of each line's text, its tags (language, corpus) left out."""
    texts = [split_tags(line, symbols)[1] for line in lines]
    return np.fromiter((len(ids) for ids in sp.encode(texts, num_threads=threads)), dtype=np.int64,
                       count=len(texts))


def keep_ratio(a: np.ndarray, b: np.ndarray, ratio: float) -> np.ndarray:
    """``(n,)`` True where both counts are >= 1 and the longer side has at most ``ratio`` times the shorter's."""
    short, long_ = np.minimum(a, b), np.maximum(a, b)
    return (short >= 1) & (long_ <= ratio * short)


def keep_mask(sp: spm.SentencePieceProcessor, symbols: dict[str, int], src: Path, tgt: Path, ratio: float,
              threads: int = 1) -> np.ndarray:
    """``(n,)`` bool: which pairs of the parallel files ``src`` / ``tgt`` the ratio keeps."""
    parts = []
    for a, b in zip(_chunks(src), _chunks(tgt), strict=True):
        if len(a) != len(b):
            raise ValueError(f"{src} and {tgt} are not parallel")
        parts.append(keep_ratio(piece_counts(sp, a, symbols, threads), piece_counts(sp, b, symbols, threads), ratio))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)


def ratio_masks(view: SampleView, prepared: Path, spm_dir: Path) -> dict[tuple[str, str], np.ndarray]:
    """``{(direction, corpus): kept lines}`` of every training corpus of ``prepared/train`` under
    ``sample.max_piece_ratio`` (empty without it). A pair and its mirrored direction hold the same pairs in the
    same order (``prepare`` writes both), so each is read once."""
    ratio = view.sample.max_piece_ratio
    if ratio is None or not view.data.train_pairs:
        return {}
    if not (spm_dir / "spm.model").is_file():
        raise DataError(f"{spm_dir / 'spm.model'}: not found; sample.max_piece_ratio counts SentencePiece pieces "
                        f"(run the spm stage first)")
    sp, symbols = load(spm_dir)
    masks: dict[tuple[str, str], np.ndarray] = {}
    for s, t in view.data.train_pairs:
        d = prepared / "train" / f"{s}-{t}"
        for c in sorted(p.stem for p in d.glob("*.src")):
            mirror = masks.get((f"{t}-{s}", c))
            masks[(f"{s}-{t}", c)] = mirror if mirror is not None else keep_mask(
                sp, symbols, d / f"{c}.src", d / f"{c}.tgt", ratio, view.spm.threads)
    return masks
