"""Fixture results in the exact formats the stages write, for the report's table tests.

``write_evaluate`` builds ``results/{exp}/evaluate`` as ``lsnmt.eval.summary`` does: one record per (method,
direction) and a summary whose averages, groups and group pairs come from ``lsnmt.eval.aggregate`` itself.
``write_tsv`` is ``lsnmt.xelm.perplexities.write_tsv`` (the x-elm stages' writer). ``write_lm_meta`` and
``write_expert_info`` write ``lm_data``'s ``data/{exp}/lm/meta.json`` and an LM job's ``data.json`` with the keys
``lsnmt.xelm.lmdata._build`` and ``lsnmt.xelm.trainer.train`` write.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from lsnmt.eval import aggregate
from lsnmt.eval.degenerate import bleu_metric
from lsnmt.eval.markdown import markdown
from lsnmt.eval.significance import count_outcomes
from lsnmt.experiment.params import Experiment, Params
from lsnmt.io import write_json
from lsnmt.xelm.perplexities import write_tsv
from tests.conftest import ROOT

Score = Callable[[str, str, str], float]
"""(method, src, tgt) -> score of one direction."""

__all__ = ["write_evaluate", "write_expert_info", "write_lm_meta", "write_tsv"]


def write_lm_meta(data: Path, exp: str, seen: list[str], targets: list[str], size: Callable[[str], int]) -> None:
    """``data/{exp}/lm/meta.json``: ``size(lang)`` training bytes per language (valid: a tenth), 100 bytes a
    document, 4 bytes a token."""
    langs = [*seen, *targets]
    nbytes = {"train": {x: size(x) for x in langs}, "valid": {x: size(x) // 10 for x in langs}}
    meta = {"languages": seen, "targets": targets, "vocab_size": 8000, "bos": 0, "pad": 1, "eos": 2, "unk": 3,
            "docs": {s: {x: b // 100 for x, b in v.items()} for s, v in nbytes.items()},
            "tokens": {s: {x: b // 4 for x, b in v.items()} for s, v in nbytes.items()}, "bytes": nbytes,
            "files": {s: {x: [f"mono/{s}/mc4.{x}"] for x in langs} for s in nbytes}, "tokenizer": "spm/spm.model"}
    write_json(data / exp / "lm" / "meta.json", meta)


def write_expert_info(results: Path, exp: str, job: str, updates: int, batch_tokens: int) -> None:
    """``results/{exp}/xelm/experts/{job}/data.json`` as ``lsnmt.xelm.trainer.train`` writes it."""
    info = {"job": job, "updates": updates, "batch_tokens": batch_tokens, "tokens_seen": updates * batch_tokens,
            "init": f"results/{exp}/xelm/seed/model.pt", "data": {"en": {"docs": 10, "tokens": 1000}}}
    write_json(results / exp / "xelm" / "experts" / job / "data.json", info)


def write_evaluate(results: Path, exp: Experiment, methods: list[str], score: Score,
                   metrics: tuple[str, ...] | None = None, not_significant: frozenset[str] = frozenset(),
                   degenerate: dict | None = None, cost: dict | None = None) -> dict:
    """``results/{exp.name}/evaluate``: per-direction records, ``summary.json`` (no similarity, t-SNE or off-target;
    parameter counts from ``cost``, ``{method: {train_params, inference_params_min, inference_params_max}}``)
    and ``summary.md`` (``lsnmt.eval.markdown.markdown``); returns the summary. ``degenerate``: the summary's flags
    (``lsnmt.eval.degenerate.flags``: ``systems``, ``pairs``); every direction of a method in its ``pairs`` is
    untested, as the evaluate stage leaves it."""
    metrics = metrics or tuple(exp.evaluate.metrics)
    cfg = exp.evaluate  # the thresholds as lsnmt.eval.degenerate.flags writes them
    flags = {"length_ratio": cfg.degenerate_length_ratio, "score": cfg.degenerate_score,
             "score_metric": bleu_metric(metrics), "ratios": {}, "systems": {}, "pairs": {}, **(degenerate or {})}
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
                                  "significant": None if m in flags["pairs"] else f"{s}-{t}" not in not_significant}
                     for s, t in pairs}
            significance[m][metric] = {"outcomes": count_outcomes(tests), "directions": tests}
    summary = {
        "experiment": exp.name, "methods": methods, "baseline": base, "metrics": list(metrics),
        "test_set": "test", "label": "fixture", "signatures": {metric: ["fixture"] for metric in metrics},
        "sentences": {f"{s}-{t}": 10 for s, t in pairs},
        "direction_sets": {k: [f"{s}-{t}" for s, t in v] for k, v in sets.items()},
        "groups": {"source": "evaluate.resource_groups", "languages": groups},
        "scores": {m: {metric: aggregate.summarise(scores[m][metric], sets, groups, pivot) for metric in metrics}
                   for m in methods},
        "win_ratio": {m: {metric: dict.fromkeys(sets) if m in flags["pairs"] else  # as lsnmt.eval.summary
                          aggregate.win_ratios(scores[m][metric], scores[base][metric], sets) for metric in metrics}
                      for m in methods if m != base and base in methods},
        "significance": significance, "similarity": {}, "figures": [], "cost": cost or {}, "atp": {},
        "degenerate": flags,
    }
    write_json(out / "summary.json", summary)
    (out / "summary.md").write_text(markdown(summary), encoding="utf-8")
    return summary


def write_json_file(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc), encoding="utf-8")


def write_default_degenerate(results: Path) -> tuple[Params, list[str]]:
    """``default``'s evaluation of every method on fixture scores (0.2 + index / 10 BLEU, every system flagged
    below 1.0 BLEU) under ``results``: params.yaml and the methods."""
    params = Params.load(ROOT / "params.yaml")
    methods = list(params.methods_of("default"))
    degenerate = {"systems": {m: "below 1.0 BLEU" for m in methods}}
    write_evaluate(results, params.get("default"), methods, lambda m, s, t: 0.2 + methods.index(m) / 10,
                   degenerate=degenerate)
    return params, methods
