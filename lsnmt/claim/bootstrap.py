"""Resampling of the claim's pooled corpus (``lsnmt.claim``): test sentences with all their outputs, and (not used by
the stage) seeds.

A system's tested corpus holds one hypothesis per seed ``s`` (S of them), direction ``d`` (D) and test sentence
``i`` (N), pooled in that order (:func:`lsnmt.claim.stats.pool`). These S x D x N items are not independent: every
seed translates the same sentences, and in the synthetic task sentence ``i`` of every direction renders the same
concept sequence (``lsnmt.data.synthetic.write_shards``), so the outputs of one sentence rise and fall together;
and every output of a seed shares that seed's training run. Resampling the items one by one (Koehn 2004's paired
bootstrap on the pooled corpus) treats S copies of a sentence as S independent sentences, and a seed's luck as
sampling noise that averages out: its intervals are too narrow.

Each of ``B`` resamples draws (both with replacement)::

    sentences: c_b ~ Multinomial(N; 1/N, ..., 1/N)    c_b(i): how often sentence i is drawn, in every direction
    seeds:     m_b ~ Multinomial(S; 1/S, ..., 1/S)    only with ``over_seeds``; else m_b(s) = 1, every seed once
    item (s, d, i) enters resample b with weight      w_b(s, d, i) = m_b(s) * c_b(i)

A corpus score of a resample is computed from the weighted sums of the items' sufficient statistics (BLEU:
n-gram matches and totals; exact match: ``100 * sum_k w_k x_k / sum_k w_k``), both systems of a comparison on the
same weights. The stage resamples sentences only (every seed kept): their spread is the sentence term of the
interval of :mod:`lsnmt.claim.interval`, whose seed term comes from the per-seed scores. Resampling seeds as well
(``over_seeds``, with percentiles: :func:`interval`) is Owen's (2007) pigeonhole bootstrap for a crossed design,
the stage's former interval, kept to show why it was replaced: with two seeds it has three seed outcomes and
halves the seed variance (``tests/claim/test_interval.py`` measures its coverage).

Seeds and sentences are drawn by two generators (``default_rng([seed, 0])`` and ``([seed, 1])``): the sentence
draws do not depend on the number of seeds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sacrebleu.metrics.base import Metric

from lsnmt.eval import significance


@dataclass(frozen=True)
class Design:
    """The shape of a pooled corpus: ``seeds x directions x sentences`` items, in that order."""

    seeds: int
    directions: int
    sentences: int

    @property
    def items(self) -> int:
        return self.seeds * self.directions * self.sentences


def counts(rng: np.random.Generator, n: int, samples: int) -> np.ndarray:
    """``(samples, n)``: how often each of ``n`` units is drawn when ``n`` are drawn with replacement."""
    return rng.multinomial(n, np.full(n, 1.0 / n), size=samples).astype(np.float64)


def weights(design: Design, samples: int, seed: int, *, over_seeds: bool = True) -> np.ndarray:
    """``(samples, items)``: the weight ``m_b(s) * c_b(i)`` of every pooled item in every resample (module
    docstring); ``over_seeds=False`` keeps every seed once (sentences alone are resampled)."""
    s, d, n = design.seeds, design.directions, design.sentences
    if over_seeds:
        m = counts(np.random.default_rng([seed, 0]), s, samples)
    else:
        m = np.ones((samples, s))
    c = counts(np.random.default_rng([seed, 1]), n, samples)
    w = m[:, :, None, None] * c[:, None, None, :]  # (B, S, 1, N) -> broadcast over the directions
    return np.broadcast_to(w, (samples, s, d, n)).reshape(samples, design.items)


def bleu(metric: Metric, stats: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``(B,)`` corpus score of each resample from the items' ``(items, k)`` sufficient statistics."""
    return significance.resample_scores(metric, stats, w)


def exact(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """``(B,)`` exact match (%) of each resample from the items' 0/1 matches."""
    return 100 * (w @ x) / w.sum(axis=1)


def interval(values: np.ndarray) -> list[float]:
    """The 95 % percentile interval (the pigeonhole bootstrap's, with ``over_seeds``; not the stage's)."""
    lo, hi = np.percentile(values, [2.5, 97.5])
    return [float(lo), float(hi)]
