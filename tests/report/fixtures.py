"""Fixture results in the exact formats the stages write, for the report's table tests.

``write_evaluate`` builds ``results/{exp}/evaluate`` as ``lsnmt.eval.evaluate`` does: one record per (method,
direction) and a summary whose averages, groups and group pairs come from ``lsnmt.eval.aggregate`` itself.
``write_tsv`` is ``lsnmt.xelm.evaluate.write_tsv`` (the x-elm stages' writer).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from lsnmt.config import Experiment
from lsnmt.eval import aggregate
from lsnmt.eval.significance import count_outcomes
from lsnmt.io import write_json
from lsnmt.xelm.evaluate import write_tsv

Score = Callable[[str, str, str], float]
"""(method, src, tgt) -> score of one direction."""

__all__ = ["write_evaluate", "write_tsv"]


def write_evaluate(results: Path, exp: Experiment, methods: list[str], score: Score,
                   metrics: tuple[str, ...] | None = None, not_significant: frozenset[str] = frozenset()) -> None:
    """``results/{exp.name}/evaluate``: per-direction records and ``summary.json`` (no analyses, no off-target)."""
    metrics = metrics or tuple(exp.evaluate.metrics)
    out = results / exp.name / "evaluate"
    pairs, pivot = exp.data.eval_pairs, exp.data.pivot
    sets = aggregate.direction_sets(pairs, exp.data.train_pairs, pivot)
    groups = dict(exp.evaluate.resource_groups)
    scores: dict[str, dict[str, dict[tuple[str, str], float]]] = {}
    for m in methods:
        scores[m] = {metric: {p: score(m, *p) for p in pairs} for metric in metrics}
        for p in pairs:
            rec = {"method": m, "direction": f"{p[0]}-{p[1]}", "src": p[0], "tgt": p[1], "sentences": 10,
                   "zero_shot": p not in exp.data.train_pairs,
                   "scores": {metric: {"name": metric, "score": scores[m][metric][p], "signature": "fixture"}
                              for metric in metrics}}
            write_json(out / m / f"{p[0]}-{p[1]}.json", rec)
    base = exp.evaluate.baseline
    significance = {}
    for m in (m for m in methods if m != base and base in methods):
        significance[m] = {}
        for metric in metrics:
            tests = {f"{s}-{t}": {"score": scores[m][metric][(s, t)], "baseline": scores[base][metric][(s, t)],
                                  "delta": scores[m][metric][(s, t)] - scores[base][metric][(s, t)],
                                  "p": 0.5 if f"{s}-{t}" in not_significant else 0.001,
                                  "significant": f"{s}-{t}" not in not_significant}
                     for s, t in pairs}
            significance[m][metric] = {"outcomes": count_outcomes(tests), "directions": tests}
    summary = {
        "experiment": exp.name, "methods": methods, "baseline": base, "metrics": list(metrics),
        "direction_sets": {k: [f"{s}-{t}" for s, t in v] for k, v in sets.items()},
        "groups": {"source": "evaluate.resource_groups", "languages": groups},
        "scores": {m: {metric: aggregate.summarise(scores[m][metric], sets, groups, pivot) for metric in metrics}
                   for m in methods},
        "win_ratio": {}, "significance": significance, "similarity": {}, "figures": [], "cost": {}, "atp": {},
    }
    write_json(out / "summary.json", summary)


def write_json_file(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")
