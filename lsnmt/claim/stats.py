"""Scores, intervals over seeds and sentences, and paired comparisons of the claim's systems (``lsnmt.claim``).

A system's hypotheses are ``{seed: {direction: lines}}``; :func:`pool` concatenates them (seeds, then directions,
then sentences) into the corpus that is scored: corpus BLEU (sacreBLEU on token ids as words, ``tokenize none``)
and exact match ``EM = 100 / n * sum_k 1[h_k = r_k]``. Each score and difference gets the 95 % interval and p of
:mod:`lsnmt.claim.interval` for the crossed design (seeds x sentences), from the per-seed scores and the sentence
bootstrap of :mod:`lsnmt.claim.bootstrap` (each sentence with its outputs in every direction and seed); the two
systems of a comparison are scored on the same sentence resamples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sacrebleu.metrics import BLEU

from lsnmt.claim import bootstrap, interval
from lsnmt.eval import degenerate, significance
from lsnmt.eval.config import EvaluateConfig

Runs = Mapping[int, Mapping[str, Sequence[str]]]
"""Seed -> direction -> hypotheses."""
INTERVAL = "over seeds and sentences (crossed), t on seeds - 1 degrees of freedom: lsnmt.claim.interval"
"""How a comparison's intervals were made (``summary.json``'s ``comparisons[].interval``)."""


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


def design(refs: Mapping[str, Sequence[str]], seeds: Sequence[int]) -> bootstrap.Design:
    """The pooled corpus's shape; every direction must hold the same test sentences, in the same order."""
    sizes = {len(r) for r in refs.values()}
    if len(sizes) != 1:
        raise ValueError(f"directions differ in test sentences: {sorted(sizes)}; the bootstrap resamples sentences")
    return bootstrap.Design(seeds=len(seeds), directions=len(refs), sentences=sizes.pop())


def resample_weights(refs: Mapping[str, Sequence[str]], seeds: Sequence[int], samples: int, seed: int) -> np.ndarray:
    """``(samples, items)``: sentence resamples, each sentence with its outputs in every direction and seed."""
    return bootstrap.weights(design(refs, seeds), samples, seed, over_seeds=False)


class Resampled:
    """One system's pooled corpus: its scores, each seed's, and its B BLEU and exact-match scores on sentence
    resamples ``w``."""

    def __init__(self, runs: Runs, refs: Mapping[str, Sequence[str]], seeds: Sequence[int], w: np.ndarray) -> None:
        dirs = list(refs)
        self.hyps = pool(runs, seeds, dirs)
        self.refs = pool({s: refs for s in seeds}, seeds, dirs)
        self.scores = score(self.hyps, self.refs)
        self.per_seed = {s: score(pool(runs, [s], dirs), pool({s: refs}, [s], dirs)) for s in seeds}
        m = metric()
        self.bleu = bootstrap.bleu(m, significance.sentence_stats(m, self.hyps, self.refs), w)
        self.exact = bootstrap.exact(exact(self.hyps, self.refs), w)


def system_summary(runs: Runs, refs: Mapping[str, Sequence[str]], seeds: Sequence[int], samples: int,
                   seed: int) -> dict[str, Any]:
    """Pooled scores with their 95 % intervals over seeds and sentences (:mod:`lsnmt.claim.interval`), per seed
    and per direction (pooled over seeds)."""
    dirs, n = list(refs), design(refs, seeds).sentences
    r = Resampled(runs, refs, seeds, resample_weights(refs, seeds, samples, seed))
    iv = {k: interval.crossed(r.scores[k], [x[k] for x in r.per_seed.values()], getattr(r, k), n)
          for k in ("bleu", "exact")}
    return {**r.scores, "bleu_ci": iv["bleu"].ci, "exact_ci": iv["exact"].ci,
            "bleu_interval": iv["bleu"].record(), "exact_interval": iv["exact"].record(),
            "per_seed": {str(s): x for s, x in r.per_seed.items()},
            "per_direction": {d: score([h for s in seeds for h in runs[s][d]], [x for _ in seeds for x in refs[d]])
                              for d in dirs}}


def _test(a: Resampled, b: Resampled, key: str, per_seed: Mapping[str, Mapping[str, float]], sentences: int,
          alpha: float, samples: int, seed: int) -> dict[str, Any]:
    delta = a.scores[key] - b.scores[key]
    iv = interval.crossed(delta, [d[key] for d in per_seed.values()], getattr(a, key) - getattr(b, key), sentences)
    return {"score": a.scores[key], "baseline": b.scores[key], "delta": delta, "p": iv.p,
            "significant": iv.p < alpha, "ci": iv.ci, **iv.record(), "samples": samples, "seed": seed,
            "alpha": alpha}


def compare(runs: Runs, base: Runs, refs: Mapping[str, Sequence[str]], seeds: Sequence[int], *, samples: int,
            seed: int, alpha: float, names: tuple[str, str]) -> dict[str, Any]:
    """``runs`` against ``base`` (paired by seed and sentence; the same sentence resamples): BLEU and exact-match
    differences with their 95 % intervals and p over seeds and sentences (:mod:`lsnmt.claim.interval`), and each
    seed's differences; degenerate outputs get no test."""
    w = resample_weights(refs, seeds, samples, seed)
    a, b = Resampled(runs, refs, seeds, w), Resampled(base, refs, seeds, w)
    per_seed = {str(s): {k: a.per_seed[s][k] - b.per_seed[s][k] for k in ("bleu", "exact")} for s in seeds}
    why = degenerate.pair(degenerate.Output(name=names[0], ratio=a.scores["length_ratio"], bleu=a.scores["bleu"]),
                          degenerate.Output(name=names[1], ratio=b.scores["length_ratio"], bleu=b.scores["bleu"]),
                          EvaluateConfig())
    n = design(refs, seeds).sentences
    tests = {k: _test(a, b, k, per_seed, n, alpha, samples, seed) for k in ("bleu", "exact")}
    if why is not None:
        keep = ("ci", "se", "se_seeds", "se_sentences", "df")
        tests = {k: {**significance.no_verdict(a.scores[k], b.scores[k], why), **{x: t[x] for x in keep}}
                 for k, t in tests.items()}
    return {"system": names[0], "baseline": names[1], **tests, "per_seed": per_seed,
            "seeds_better": sum(d["bleu"] > 0 for d in per_seed.values()), "interval": INTERVAL}


def better(c: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether comparison ``c`` shows its system above its baseline in BLEU, and the evidence: the 95 % interval of
    the difference over seeds and sentences lies above 0 and the system is better on every seed (degenerate
    outputs: never)."""
    t, n, k = c["bleu"], len(c["per_seed"]), c["seeds_better"]
    name = f"{c['system']} - {c['baseline']}"
    if t["significant"] is None:
        return False, f"{name}: no verdict ({t['degenerate']})"
    text = (f"{name} = {t['delta']:+.2f} BLEU [{t['ci'][0]:+.2f}, {t['ci'][1]:+.2f}], p = {t['p']:.3g}, "
            f"better on {k} of {n} seeds")
    return bool(t["delta"] > 0 and t["ci"][0] > 0 and k == n), text
