"""The ``sample`` stage: temperature sampling over training directions.

With n_l sentence pairs in direction l, the sampling distribution is

    p_l = n_l^(1/T) / sum_k n_k^(1/T)                         (Arivazhagan et al., 2019)

T = 1 keeps the natural proportions, T -> inf tends to uniform; the papers use
T = 2 (IWSLT'14) and T = 5 (OPUS-100). The sampled epoch has N = ``sample.size``
pairs (default sum_l n_l) and direction l gets m_l = round(N p_l) of them
(largest-remainder rounding, so the m_l add up to N exactly): m_l > n_l
up-samples (every line q = m_l // n_l times plus a random r = m_l mod n_l
lines once more), m_l < n_l down-samples.

Inside a direction, corpora listed in ``sample.per_source.downsample`` are first
down-sampled against the direction's other corpora (LSL paper, App. B): their
share becomes the temperature share p_c of corpus c among the direction's
corpora, i.e. m_c = p_c / (1 - p_c) * sum_{c' != c} n_c', but never below
n_c / max_factor (LSL caps the factor at 10).

**Per-epoch re-draw** (``sample.redraw: epoch``, the default). fairseq's temperature
sampling (``SampledMultiEpochDataset``, the papers' toolkit) draws every epoch anew; a
single draw reused for the whole run would never show a down-sampled corpus's other
lines (at T = 5 about a quarter of OPUS-100's high-resource data). So the stage writes
every line of each direction once (its corpora one after the other) and records the
plan in ``sampling.json``: per direction and corpus its ``offset`` in the direction
file, ``n`` and ``m``. The trainer (``lsnmt.train.batching``) calls
:func:`epoch_lines` for each epoch: q = m // n copies of every line plus r = m mod n
distinct lines drawn from a generator seeded by (seed, epoch, direction, corpus), so two
epochs differ and every run draws the same epochs. ``redraw: once`` writes one drawn
epoch instead, reused every epoch.

**Length-ratio cleaning** (``sample.max_piece_ratio``; :mod:`lsnmt.data.clean`): with a ratio r, a pair whose
SentencePiece piece counts differ by more than a factor r is left out before anything is counted or drawn, as
M2M-100's preprocessing does after SentencePiece (LSL); the stage passes the kept lines as ``masks`` and
``sampling.json`` records each corpus's ``dropped_ratio``. ``None`` (LMS-FD, CLM): no such filter.

The once-only selection is Knuth's sequential Algorithm S: one pass over the file, O(1)
memory whatever the corpus size, exactly r lines chosen, each with equal
probability; the random stream is seeded by (seed, direction, corpus).
"""

from __future__ import annotations

import logging
import math
import random
import zlib
from collections.abc import Iterator, Mapping
from pathlib import Path

import numpy as np

from lsnmt.data.config import PerSourceSampling, SampleView
from lsnmt.io import DataError, atomic_dir, count_lines, write_json
from lsnmt.runner.progress import progress

log = logging.getLogger(__name__)


def temperature_probs(sizes: Mapping[str, int], temperature: float) -> dict[str, float]:
    """p_l ∝ n_l^(1/T); raises on an empty or all-zero mapping."""
    if not sizes or all(n <= 0 for n in sizes.values()):
        raise DataError("temperature sampling needs at least one non-empty direction")
    # Work in log space so that n^(1/T) never overflows for huge corpora.
    logs = {k: math.log(n) / temperature for k, n in sizes.items() if n > 0}
    top = max(logs.values())
    weights = {k: math.exp(logs[k] - top) if k in logs else 0.0 for k in sizes}
    total = sum(weights.values())
    return {k: w / total for k, w in weights.items()}


def apportion(total: int, weights: Mapping[str, float]) -> dict[str, int]:
    """Integers proportional to ``weights`` that add up to ``total`` (largest remainder)."""
    wsum = sum(weights.values())
    exact = {k: total * w / wsum for k, w in weights.items()}
    out = {k: math.floor(v) for k, v in exact.items()}
    rest = total - sum(out.values())
    for k in sorted(exact, key=lambda k: (out[k] - exact[k], k))[:rest]:
        out[k] += 1
    return out


def per_source_sizes(sizes: Mapping[str, int], cfg: PerSourceSampling) -> dict[str, int]:
    """Sizes of each corpus of one direction after LSL-style down-sampling of noisy corpora."""
    out = dict(sizes)
    targets = [c for c in sizes if c in cfg.downsample and sizes[c] > 0]
    if not targets or len(sizes) < 2:
        return out
    probs = temperature_probs(sizes, cfg.temperature)
    for c in targets:
        others = sum(n for k, n in sizes.items() if k != c)
        wanted = probs[c] / (1.0 - probs[c]) * others if probs[c] < 1.0 else sizes[c]
        out[c] = min(sizes[c], max(math.ceil(sizes[c] / cfg.max_factor), round(wanted)))
    return out


def multiplicities(n: int, m: int, rng: random.Random) -> Iterator[int]:
    """How often each of n lines appears among m draws: q or q+1 times, exactly m in all.

    Algorithm S (Knuth, TAOCP vol. 2, 3.4.2): line i joins the r extra lines with
    probability (r - chosen) / (n - i), which selects exactly r lines uniformly.
    """
    q, r = divmod(m, n)
    chosen = 0
    for i in range(n):
        extra = chosen < r and rng.random() * (n - i) < (r - chosen)
        chosen += extra
        yield q + extra


def stream_sample(src: Path, tgt: Path, n: int, m: int, rng: random.Random, out_src, out_tgt,
                  keep: np.ndarray | None = None) -> None:
    """Write m draws of the n lines of ``src`` / ``tgt`` (``keep``: the lines of the files that count, n of them;
    ``None``: every line)."""
    with open(src, "rb") as fs, open(tgt, "rb") as ft:
        pairs: Iterator[tuple[bytes, bytes]] = zip(fs, ft, strict=True)
        if keep is not None:
            pairs = (p for p, k in zip(pairs, keep.tolist(), strict=True) if k)
        for k, (a, b) in zip(multiplicities(n, m, rng), pairs, strict=True):
            if k:
                out_src.write(a * k)
                out_tgt.write(b * k)


def epoch_lines(n: int, m: int, seed: int, epoch: int, key: str) -> np.ndarray:
    """Line indices ``(m,)`` of one epoch's draw of m out of n lines: every line q = m // n times and r = m mod n
    distinct lines once more, the r drawn by a generator seeded by ``(seed, epoch, key)``; sorted."""
    q, r = divmod(m, n)
    rng = np.random.default_rng([seed, epoch, zlib.crc32(key.encode())])
    extra = rng.choice(n, size=r, replace=False) if r else np.zeros(0, np.int64)
    return np.sort(np.concatenate([np.repeat(np.arange(n, dtype=np.int64), q), extra.astype(np.int64)]))


def epoch_draw(sampling: Mapping, direction: str, epoch: int) -> np.ndarray:
    """Line indices into direction ``direction``'s file for epoch ``epoch`` of a ``sampling.json`` written with
    ``redraw: epoch`` (each corpus at its ``offset``)."""
    parts = [c["offset"] + epoch_lines(c["n"], c["m"], sampling["seed"], epoch, f"{direction}/{name}")
             for name, c in sampling["directions"][direction]["corpora"].items() if c["n"] and c["m"]]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


Masks = dict[tuple[str, str], np.ndarray]
"""(direction, corpus) -> the lines the piece-ratio cleaning keeps (:func:`lsnmt.data.clean.ratio_masks`)."""


def plan(view: SampleView, prepared: Path, masks: Masks | None = None) -> dict:
    """Sizes, probabilities and sampled counts per direction and corpus (no text is read; ``masks``: the pairs the
    piece-ratio cleaning kept, the sizes after it)."""
    cfg, corpora, masks = view.sample, {}, masks or {}
    dropped: dict[str, dict[str, int]] = {}
    for s, t in view.data.train_pairs:
        d = prepared / "train" / f"{s}-{t}"
        names = sorted(p.stem for p in d.glob("*.src"))
        corpora[f"{s}-{t}"] = {c: int(masks[(f"{s}-{t}", c)].sum()) if (f"{s}-{t}", c) in masks
                               else count_lines(d / f"{c}.src") for c in names}
        dropped[f"{s}-{t}"] = {c: len(masks[(f"{s}-{t}", c)]) - corpora[f"{s}-{t}"][c] for c in names
                               if (f"{s}-{t}", c) in masks}
    adjusted = {k: per_source_sizes(v, cfg.per_source) for k, v in corpora.items()}
    sizes = {k: sum(v.values()) for k, v in adjusted.items()}
    probs = temperature_probs(sizes, cfg.temperature)
    counts = apportion(cfg.size or sum(sizes.values()), probs)
    out = {}
    for k in corpora:
        per_corpus = apportion(counts[k], adjusted[k]) if counts[k] else dict.fromkeys(adjusted[k], 0)
        offsets = np.cumsum([0, *corpora[k].values()]).tolist()
        out[k] = {"n": sizes[k], "p": probs[k], "m": counts[k],
                  "corpora": {c: {"n": corpora[k][c], "n_after_source_sampling": adjusted[k][c],
                                  "m": per_corpus[c], "offset": offsets[i],
                                  **({"dropped_ratio": dropped[k][c]} if c in dropped[k] else {})}
                              for i, c in enumerate(corpora[k])}}
    return out


def sample(view: SampleView, prepared: Path, out: Path, masks: Masks | None = None) -> dict:
    """Write ``train/{src}-{tgt}.{src,tgt}`` and ``sampling.json`` atomically: every line once (``redraw:
    epoch``, the trainer draws each epoch) or the one sampled epoch (``redraw: once``); of the pairs ``masks``
    keep, where given (``sample.max_piece_ratio``: :func:`lsnmt.data.clean.ratio_masks`).

    An experiment without training directions (``train_directions: none``, e.g. x-elm's monolingual mC4)
    gets an empty epoch and says so in ``sampling.json``.
    """
    if not view.data.train_pairs:
        log.info("sample: no training directions, nothing to sample")
        with atomic_dir(out) as tmp:
            (tmp / "train").mkdir()
            write_json(tmp / "sampling.json", {"temperature": view.sample.temperature, "directions": {},
                                               "note": "no training directions (data.train_directions: none)"})
        return {}
    masks = masks or {}
    stats = plan(view, prepared, masks)
    with atomic_dir(out) as tmp:
        (tmp / "train").mkdir()
        for direction, st in progress(stats.items(), "sample", unit="direction"):
            with open(tmp / "train" / f"{direction}.src", "wb") as fs, \
                 open(tmp / "train" / f"{direction}.tgt", "wb") as ft:
                for corpus, c in st["corpora"].items():
                    whole = view.sample.redraw == "epoch"
                    if c["n"] == 0 or (c["m"] == 0 and not whole):
                        continue
                    rng = random.Random(f"{view.sample.seed}/{direction}/{corpus}")
                    d = prepared / "train" / direction
                    m = c["n"] if whole else c["m"]
                    stream_sample(d / f"{corpus}.src", d / f"{corpus}.tgt", c["n"], m, rng, fs, ft,
                                  masks.get((direction, corpus)))
            log.info("sample %s: n=%d p=%.4f m=%d", direction, st["n"], st["p"], st["m"])
        write_json(tmp / "sampling.json", {"temperature": view.sample.temperature, "redraw": view.sample.redraw,
                                           "seed": view.sample.seed, "max_piece_ratio": view.sample.max_piece_ratio,
                                           "directions": stats})
    return stats
