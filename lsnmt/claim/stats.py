"""Scores, paired bootstrap against naive, and the orderings' verdicts (``lsnmt.claim``; maths in its docstring).

A system's hypotheses are ``{seed: {direction: lines}}``; :func:`pool` concatenates them (seeds, then directions,
in a fixed order) into the corpus that is scored and resampled.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sacrebleu.metrics import BLEU

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
    return {"bleu": float(metric().corpus_score(list(hyps), [list(refs)]).score),
            "exact": float(100 * exact(hyps, refs).mean()) if len(refs) else 0.0,
            "length_ratio": degenerate.length(hyps, refs)["ratio"]}


def interval(values: np.ndarray) -> list[float]:
    """The 95 % percentile interval."""
    lo, hi = np.percentile(values, [2.5, 97.5])
    return [float(lo), float(hi)]


def system_summary(runs: Runs, refs: Mapping[str, Sequence[str]], seeds: Sequence[int], samples: int,
                   seed: int) -> dict[str, Any]:
    """Pooled scores with their bootstrap intervals, per seed and per direction (pooled over seeds)."""
    dirs = list(refs)
    hyps, pooled_refs = pool(runs, seeds, dirs), pool({s: refs for s in seeds}, seeds, dirs)
    counts = significance.resample_counts(len(pooled_refs), samples, seed)
    m = metric()
    bleu = significance.resample_scores(m, significance.sentence_stats(m, hyps, pooled_refs), counts)
    em = 100 * counts @ exact(hyps, pooled_refs) / len(pooled_refs)
    return {**score(hyps, pooled_refs), "bleu_ci": interval(bleu), "exact_ci": interval(em),
            "per_seed": {str(s): score(pool(runs, [s], dirs), pool({s: refs}, [s], dirs)) for s in seeds},
            "per_direction": {d: score([h for s in seeds for h in runs[s][d]], [r for _ in seeds for r in refs[d]])
                              for d in dirs}}


def compare(runs: Runs, base: Runs, refs: Mapping[str, Sequence[str]], seeds: Sequence[int], *, samples: int,
            seed: int, alpha: float, names: tuple[str, str]) -> dict[str, Any]:
    """Paired bootstrap of ``runs`` against ``base`` on the pooled corpus (:func:`significance.paired_bootstrap`,
    with the resampled deltas' 95 % interval), exact match on the same resamples, and each seed's deltas."""
    dirs = list(refs)
    hyps, base_hyps = pool(runs, seeds, dirs), pool(base, seeds, dirs)
    pooled_refs = pool({s: refs for s in seeds}, seeds, dirs)
    a, b = score(hyps, pooled_refs), score(base_hyps, pooled_refs)
    why = degenerate.pair(degenerate.Output(name=names[0], ratio=a["length_ratio"], bleu=a["bleu"]),
                          degenerate.Output(name=names[1], ratio=b["length_ratio"], bleu=b["bleu"]), EvaluateConfig())
    m = metric()
    counts = significance.resample_counts(len(pooled_refs), samples, seed)
    deltas = (significance.resample_scores(m, significance.sentence_stats(m, hyps, pooled_refs), counts)
              - significance.resample_scores(m, significance.sentence_stats(m, base_hyps, pooled_refs), counts))
    em_a = 100 * counts @ exact(hyps, pooled_refs) / len(pooled_refs)
    em_b = 100 * counts @ exact(base_hyps, pooled_refs) / len(pooled_refs)
    if why is None:
        bleu = significance.paired_bootstrap(m, hyps, base_hyps, pooled_refs, samples=samples, seed=seed, alpha=alpha)
        p = significance.p_value(em_a, em_b, a["exact"] - b["exact"])
        em = {"score": a["exact"], "baseline": b["exact"], "delta": a["exact"] - b["exact"], "p": p,
              "significant": p < alpha, "samples": samples, "seed": seed, "alpha": alpha}
    else:
        bleu = significance.no_verdict(a["bleu"], b["bleu"], why)
        em = significance.no_verdict(a["exact"], b["exact"], why)
    per_seed = {}
    for s in seeds:
        r = pool({s: refs}, [s], dirs)
        sa, sb = score(pool(runs, [s], dirs), r), score(pool(base, [s], dirs), r)
        per_seed[str(s)] = {"bleu": sa["bleu"] - sb["bleu"], "exact": sa["exact"] - sb["exact"]}
    return {"system": names[0], "baseline": names[1], "bleu": {**bleu, "ci": interval(deltas)},
            "exact": {**em, "ci": interval(em_a - em_b)}, "per_seed": per_seed,
            "seeds_better": sum(d["bleu"] > 0 for d in per_seed.values())}


def better(c: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether comparison ``c`` shows its system above its baseline in BLEU (module docstring), and why."""
    t, n, k = c["bleu"], len(c["per_seed"]), c["seeds_better"]
    name = f"{c['system']} - {c['baseline']}"
    if t["significant"] is None:
        return False, f"{name}: no verdict ({t['degenerate']})"
    text = (f"{name} = {t['delta']:+.2f} BLEU [{t['ci'][0]:+.2f}, {t['ci'][1]:+.2f}], p = {t['p']:.3g}, "
            f"better on {k} of {n} seeds")
    return bool(t["delta"] > 0 and t["significant"] and k == n), text


def ordering(claim: str, parts: Sequence[Mapping[str, Any] | None], missing: str) -> dict[str, str]:
    """``{claim, status, because}``: ``shown`` when every part is (:func:`better`), ``not measured`` when a
    system it needs was not configured (``missing`` says which)."""
    if any(p is None for p in parts):
        return {"claim": claim, "status": "not measured", "because": missing}
    verdicts = [better(p) for p in parts if p is not None]
    status = "shown" if all(ok for ok, _ in verdicts) else "not shown"
    return {"claim": claim, "status": status, "because": "; ".join(text for _, text in verdicts)}
