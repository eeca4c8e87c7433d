"""Paired bootstraps between two systems: every system against ``evaluate.baseline``, and each comparison of
``evaluate.comparisons`` (one a paper prints besides the baseline's, e.g. LSL Sec. 4.2: LSL-NAS against the best
language adapters, significant on 38 / 62 of 90 directions).

On each direction and sacreBLEU metric, system ``m`` is tested against reference ``r`` with sacreBLEU's paired
bootstrap (:func:`lsnmt.eval.significance.paired_bootstrap`); where their outputs are degenerate (pooled over all
directions, or on that direction: ``lsnmt/eval/degenerate.py``) no test runs and the record says why. The summary
holds, per comparison ``"<m> vs <r>"``::

    {"method": m, "reference": r, "degenerate": reason or None,
     "tests": {metric: {"outcomes": {better, worse, not_significant, degenerate}, "directions": {d: record}}}}

or ``{"method", "reference", "not_run": why}`` when either system was not evaluated in this run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from lsnmt.eval import degenerate
from lsnmt.eval.config import EvaluateView
from lsnmt.eval.scores import SACREBLEU_METRICS, build_metric
from lsnmt.eval.significance import count_outcomes, no_verdict, paired_bootstrap

Pair = tuple[str, str]
Records = Mapping[str, Mapping[Pair, Mapping[str, Any]]]


def name(pair: Pair) -> str:
    return f"{pair[0]}-{pair[1]}"


def pooled_reason(spec: EvaluateView, records: Records, method: str, reference: str) -> str | None:
    """Why ``method`` and ``reference`` get no verdict on any direction (pooled output), or ``None``."""
    metric = degenerate.bleu_metric(spec.evaluate.metrics)
    return degenerate.pair(degenerate.pooled_output(method, records[method], metric),
                           degenerate.pooled_output(reference, records[reference], metric), spec.evaluate)


def pair_test(spec: EvaluateView, metric: str, pair: Pair, method: str, reference: str,
              hyps: Mapping[str, Mapping[Pair, list[str]]], refs: Mapping[Pair, list[str]], records: Records,
              pooled: str | None) -> dict[str, Any]:
    """One direction's paired bootstrap of ``method`` against ``reference``, or why there is none (``pooled``: the
    reason over all directions, if any)."""
    cfg = spec.evaluate
    ours, theirs = records[method][pair], records[reference][pair]
    score_metric = degenerate.bleu_metric(cfg.metrics)
    why = pooled or degenerate.pair(degenerate.direction_output(method, ours, score_metric),
                                    degenerate.direction_output(reference, theirs, score_metric), cfg)
    if why is not None:
        return no_verdict(ours["scores"][metric]["score"], theirs["scores"][metric]["score"], why)
    return paired_bootstrap(build_metric(metric, pair[1], cfg.bleu_tokenize), hyps[method][pair],
                            hyps[reference][pair], refs[pair], samples=cfg.bootstrap_samples, seed=cfg.seed,
                            alpha=cfg.significance)


def tests(spec: EvaluateView, method: str, reference: str, hyps: Mapping[str, Mapping[Pair, list[str]]],
          refs: Mapping[Pair, list[str]], records: Records, pooled: str | None) -> dict[str, Any]:
    """``{metric: {"outcomes", "directions"}}`` of ``method`` against ``reference`` on every direction."""
    out: dict[str, Any] = {}
    for metric in (m for m in spec.evaluate.metrics if m in SACREBLEU_METRICS):
        per = {name(p): pair_test(spec, metric, p, method, reference, hyps, refs, records, pooled) for p in refs}
        out[metric] = {"outcomes": count_outcomes(per), "directions": per}
    return out


def comparisons(spec: EvaluateView, names: Sequence[str], hyps: Mapping[str, Mapping[Pair, list[str]]],
                refs: Mapping[Pair, list[str]], records: Records) -> dict[str, Any]:
    """Every ``evaluate.comparisons`` pair on one test set (module docstring)."""
    out: dict[str, Any] = {}
    for method, reference in spec.evaluate.comparisons:
        key, entry = f"{method} vs {reference}", {"method": method, "reference": reference}
        missing = [s for s in (method, reference) if s not in names]
        if missing:
            out[key] = {**entry, "not_run": f"not evaluated in this run: {', '.join(missing)}"}
            continue
        pooled = pooled_reason(spec, records, method, reference)
        out[key] = {**entry, "degenerate": pooled, "tests": tests(spec, method, reference, hyps, refs, records, pooled)}
    return out
