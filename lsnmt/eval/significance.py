"""Paired bootstrap resampling (Koehn 2004) exactly as sacreBLEU's ``--paired-bs`` runs it.

For a test set of n sentences, draw B resamples of n sentence indices with
replacement (``numpy.random.default_rng(seed).choice(n, (B, n))``, the same
draws for both systems), and score each resample from summed sufficient
statistics: s_m^(i) for the method, s_b^(i) for the baseline. With the observed
difference ``delta = s_m - s_b`` and ``d_i = |s_m^(i) - s_b^(i)|``, the p-value is

    p = (1 + #{i : d_i - mean(d) >= |delta|}) / (B + 1)

(``sacrebleu.significance._paired_bs_test``, after Moses'
``bootstrap-hypothesis-difference-significance.pl``; the +1 keeps the test
conservative). The difference is significant when ``p < alpha`` (LSL Sec. 4:
chrF, all directions, 5%). It is two-sided: ``delta`` says which way.

One deliberate difference: sacreBLEU counts ``>`` where this counts ``>=``. They
differ only on exact ties, i.e. in practice when both systems score the same on
every resample: for identical outputs sacreBLEU 2.6 (``--paired-bs``) returns
p = 1/(B+1) and marks them significantly different; here p = 1.
Resample sums are computed as ``counts @ stats`` (counts of each sentence in a
resample), which equals sacreBLEU's per-resample sums for these integer statistics.

Between degenerate outputs (``lsnmt/eval/degenerate.py``) no test is run: :func:`no_verdict` records the
scores, ``significant: None`` and the reason, and :func:`count_outcomes` counts them apart.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from sacrebleu.metrics.base import Metric


def resample_counts(n: int, samples: int, seed: int) -> np.ndarray:
    """``(samples, n)`` float64: how often each sentence is drawn in each resample (sacreBLEU's draws)."""
    rng = np.random.default_rng(seed)
    idx = rng.choice(n, size=(samples, n), replace=True)
    counts = np.zeros((samples, n), dtype=np.float64)
    np.add.at(counts, (np.arange(samples)[:, None], idx), 1.0)
    return counts


def sentence_stats(metric: Metric, hyps: Sequence[str], refs: Sequence[str]) -> np.ndarray:
    """``(n, k)`` sufficient statistics of each sentence (n-gram matches and totals)."""
    stats = metric._extract_corpus_statistics(list(hyps), [list(refs)])
    return np.asarray(stats, dtype=np.float64)


def resample_scores(metric: Metric, stats: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``(B,)`` corpus score of every resample."""
    sums = counts @ stats  # (B, k)
    return np.array([metric._compute_score_from_stats(row).score for row in sums])


def p_value(method_scores: np.ndarray, baseline_scores: np.ndarray, observed: float) -> float:
    d = np.abs(method_scores - baseline_scores)
    return float((np.sum(d - d.mean() >= abs(observed)) + 1) / (len(d) + 1))


def paired_bootstrap(metric: Metric, hyps: Sequence[str], baseline_hyps: Sequence[str], refs: Sequence[str], *,
                     samples: int = 1000, seed: int = 12345, alpha: float = 0.05) -> dict[str, Any]:
    """Test method against baseline on one direction: ``{score, baseline, delta, p, significant, ...}``."""
    if not (len(hyps) == len(baseline_hyps) == len(refs)):
        raise ValueError(f"lengths differ: {len(hyps)} hypotheses, {len(baseline_hyps)} baseline, {len(refs)} refs")
    stats_m, stats_b = sentence_stats(metric, hyps, refs), sentence_stats(metric, baseline_hyps, refs)
    score_m = metric._compute_score_from_stats(stats_m.sum(0)).score
    score_b = metric._compute_score_from_stats(stats_b.sum(0)).score
    counts = resample_counts(len(refs), samples, seed)
    p = p_value(resample_scores(metric, stats_m, counts), resample_scores(metric, stats_b, counts),
                score_m - score_b)
    return {"score": float(score_m), "baseline": float(score_b), "delta": float(score_m - score_b), "p": p,
            "significant": p < alpha, "samples": samples, "seed": seed, "alpha": alpha}


def no_verdict(score: float, baseline: float, reason: str) -> dict[str, Any]:
    """The record of a direction where the outputs are degenerate: scores, no test, the reason."""
    return {"score": float(score), "baseline": float(baseline), "delta": float(score - baseline), "p": None,
            "significant": None, "degenerate": reason}


def count_outcomes(tests: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Directions where the method is significantly better, significantly worse, neither, or not tested
    (``degenerate``: :func:`no_verdict`)."""
    better = sum(bool(t["significant"]) and t["delta"] > 0 for t in tests.values())
    worse = sum(bool(t["significant"]) and t["delta"] < 0 for t in tests.values())
    degenerate = sum(t["significant"] is None for t in tests.values())
    return {"better": better, "worse": worse, "not_significant": len(tests) - better - worse - degenerate,
            "degenerate": degenerate}
