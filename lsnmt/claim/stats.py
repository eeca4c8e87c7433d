"""Scores, seed-aware intervals and paired comparisons of the claim's systems (``lsnmt.claim``).

A system's hypotheses are ``{seed: {direction: lines}}``; :func:`pool` concatenates them (seeds, then directions,
then sentences) into the corpus that is scored: corpus BLEU (sacreBLEU on token ids as words, ``tokenize none``)
and exact match ``EM = 100 / n * sum_k 1[h_k = r_k]``. Intervals, differences and p-values come from the two-stage
bootstrap of :mod:`lsnmt.claim.bootstrap` (seeds, and sentences with all their outputs); ``p`` is sacreBLEU's
paired-bootstrap p (:func:`lsnmt.eval.significance.p_value`) computed on those same resamples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sacrebleu.metrics import BLEU

from lsnmt.claim import bootstrap
from lsnmt.config import EvaluateConfig
from lsnmt.eval import degenerate, significance

Runs = Mapping[int, Mapping[str, Sequence[str]]]
"""Seed -> direction -> hypotheses."""


def metric() -> BLEU:
    """sacreBLEU on token ids as words: no tokenisation."""
    return BLEU(tokenize="none")


def pool(runs: Runs, seeds: Sequence[int], dirs: Sequence[str]) -> list[str]:
    return [h for s in seeds for d in dirs for h in runs[s][d]]


def exact(hyps: Sequence[str], refs: Sequence[str]) -> np.ndarray:
    return np.array([h == r for h, r in zip(hyps, refs, strict=True)], dtype=np.float64)


def score(hyps: Sequence[str], refs: Sequence[str]) -> dict[str, float]:
    """Corpus BLEU, exact match (%) and the length ratio of ``lsnmt.eval.degenerate``."""
    return {
        "bleu": float(metric().corpus_score(list(hyps), [list(refs)]).score),
        "exact": float(100 * exact(hyps, refs).mean()) if len(refs) else 0.0,
        "length_ratio": degenerate.length(hyps, refs)["ratio"],
    }


def interval(values: np.ndarray) -> list[float]:
    """The 95 % percentile interval (:func:`lsnmt.claim.bootstrap.interval`)."""
    return bootstrap.interval(values)


def design(refs: Mapping[str, Sequence[str]], seeds: Sequence[int]) -> bootstrap.Design:
    """The pooled corpus's shape; every direction must hold the same test sentences, in the same order."""
    sizes = {len(r) for r in refs.values()}
    if len(sizes) != 1:
        raise ValueError(f"directions differ in test sentences: {sorted(sizes)}; the bootstrap resamples sentences")
    return bootstrap.Design(seeds=len(seeds), directions=len(refs), sentences=sizes.pop())


class Resampled:
    """One system's pooled corpus and its B resampled BLEU and exact-match scores on given weights."""

    def __init__(self, runs: Runs, refs: Mapping[str, Sequence[str]], seeds: Sequence[int], w: np.ndarray) -> None:
        dirs = list(refs)
        self.hyps = pool(runs, seeds, dirs)
        self.refs = pool({s: refs for s in seeds}, seeds, dirs)
        self.scores = score(self.hyps, self.refs)
        m = metric()
        self.bleu = bootstrap.bleu(m, significance.sentence_stats(m, self.hyps, self.refs), w)
        self.exact = bootstrap.exact(exact(self.hyps, self.refs), w)


def resample_weights(refs: Mapping[str, Sequence[str]], seeds: Sequence[int], samples: int, seed: int,
                     over_seeds: bool) -> np.ndarray:
    return bootstrap.weights(design(refs, seeds), samples, seed, over_seeds=over_seeds)


def system_summary(runs: Runs, refs: Mapping[str, Sequence[str]], seeds: Sequence[int], samples: int, seed: int,
                   *, over_seeds: bool = True) -> dict[str, Any]:
    """Pooled scores with their seed-aware 95 % intervals, per seed and per direction (pooled over seeds)."""
    dirs = list(refs)
    r = Resampled(runs, refs, seeds, resample_weights(refs, seeds, samples, seed, over_seeds))
    return {**r.scores, "bleu_ci": interval(r.bleu), "exact_ci": interval(r.exact),
            "per_seed": {str(s): score(pool(runs, [s], dirs), pool({s: refs}, [s], dirs)) for s in seeds},
            "per_direction": {d: score([h for s in seeds for h in runs[s][d]], [x for _ in seeds for x in refs[d]])
                              for d in dirs}}


def _test(a: np.ndarray, b: np.ndarray, score_a: float, score_b: float, alpha: float, samples: int,
          seed: int) -> dict[str, Any]:
    delta = score_a - score_b
    p = significance.p_value(a, b, delta)
    return {"score": score_a, "baseline": score_b, "delta": delta, "p": p, "significant": p < alpha,
            "ci": interval(a - b), "samples": samples, "seed": seed, "alpha": alpha}


def compare(runs: Runs, base: Runs, refs: Mapping[str, Sequence[str]], seeds: Sequence[int], *, samples: int,
            seed: int, alpha: float, names: tuple[str, str], over_seeds: bool = True) -> dict[str, Any]:
    """``runs`` against ``base`` on the same two-stage resamples: BLEU and exact-match differences with their
    95 % intervals and p, and each seed's differences; degenerate outputs get no test."""
    w = resample_weights(refs, seeds, samples, seed, over_seeds)
    a, b = Resampled(runs, refs, seeds, w), Resampled(base, refs, seeds, w)
    why = degenerate.pair(degenerate.Output(name=names[0], ratio=a.scores["length_ratio"], bleu=a.scores["bleu"]),
                          degenerate.Output(name=names[1], ratio=b.scores["length_ratio"], bleu=b.scores["bleu"]),
                          EvaluateConfig())
    if why is None:
        bleu = _test(a.bleu, b.bleu, a.scores["bleu"], b.scores["bleu"], alpha, samples, seed)
        em = _test(a.exact, b.exact, a.scores["exact"], b.scores["exact"], alpha, samples, seed)
    else:
        bleu = {**significance.no_verdict(a.scores["bleu"], b.scores["bleu"], why), "ci": interval(a.bleu - b.bleu)}
        em = {**significance.no_verdict(a.scores["exact"], b.scores["exact"], why),
              "ci": interval(a.exact - b.exact)}
    dirs = list(refs)
    per_seed = {}
    for s in seeds:
        r = pool({s: refs}, [s], dirs)
        sa, sb = score(pool(runs, [s], dirs), r), score(pool(base, [s], dirs), r)
        per_seed[str(s)] = {"bleu": sa["bleu"] - sb["bleu"], "exact": sa["exact"] - sb["exact"]}
    return {"system": names[0], "baseline": names[1], "bleu": bleu, "exact": em, "per_seed": per_seed,
            "seeds_better": sum(d["bleu"] > 0 for d in per_seed.values()),
            "resampling": "seeds and sentences" if over_seeds else "sentences"}


def better(c: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether comparison ``c`` shows its system above its baseline in BLEU, and the evidence: the seed-aware
    95 % interval of the difference lies above 0 and the system is better on every seed (degenerate outputs:
    never)."""
    t, n, k = c["bleu"], len(c["per_seed"]), c["seeds_better"]
    name = f"{c['system']} - {c['baseline']}"
    if t["significant"] is None:
        return False, f"{name}: no verdict ({t['degenerate']})"
    text = (f"{name} = {t['delta']:+.2f} BLEU [{t['ci'][0]:+.2f}, {t['ci'][1]:+.2f}], p = {t['p']:.3g}, "
            f"better on {k} of {n} seeds")
    return bool(t["delta"] > 0 and t["ci"][0] > 0 and k == n), text
