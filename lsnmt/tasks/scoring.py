"""The ``task_eval`` stage: score every prediction, average seeds, compare with the naive model.

For each task, method, inference route, seed and test language: span F1 (NER) or SQuAD F1 and EM (QA),
``lsnmt.tasks.metrics``. Per language the seeds are averaged (Sec. 5: "3 different random seeds and report
the average scores"); ``avg`` is the mean over languages (Tables 4-5, 7-8); ``win_ratio`` the share of
languages where the method's seed-averaged score beats the naive model's (Table 4's WR), ties losing.
Writes ``results/{exp}/task_eval/summary.json`` and ``summary.md`` (the stage adds its DVC metrics, lsnmt.eval.metrics).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from statistics import mean
from typing import Any

from lsnmt.eval.aggregate import win_ratio
from lsnmt.io import DataError, atomic_dir, atomic_write, write_json
from lsnmt.tasks.metrics import span_f1, squad_scores

log = logging.getLogger(__name__)

BASELINE = "naive"


def _gold(data: Path, kind: str, lang: str) -> Any:
    if kind == "ner":
        with open(data / "test" / f"{lang}.jsonl", encoding="utf-8") as fh:
            return [json.loads(line)["tags"] for line in fh]
    gold = json.loads((data / "test" / f"{lang}.gold.json").read_text(encoding="utf-8"))
    return {qid: g["answers"] for qid, g in gold.items()}


def score(kind: str, gold: Any, pred: Any) -> dict[str, float]:
    """``{"f1": …}`` (NER) or ``{"f1": …, "exact_match": …}`` (QA), in percent."""
    return {"f1": span_f1(gold, pred)} if kind == "ner" else squad_scores(gold, pred)


def _seed_runs(method_dir: Path) -> list[dict[str, Any]]:
    runs = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(method_dir.glob("seed*/predictions.json"))]
    if not runs:
        raise DataError(f"{method_dir}: no seed*/predictions.json; run the task_train stage")
    return runs


def evaluate_task(name: str, data: Path, results: Path) -> dict[str, Any]:
    """Scores of every method of one task (``results``: ``results/{exp}/tasks/{name}``)."""
    meta = json.loads((data / "meta.json").read_text(encoding="utf-8"))
    kind, langs = meta["kind"], meta["languages"]
    gold = {lang: _gold(data, kind, lang) for lang in langs}
    methods: dict[str, Any] = {}
    for method_dir in sorted(d for d in results.iterdir() if d.is_dir()):
        runs = _seed_runs(method_dir)
        entry: dict[str, Any] = {"primary": runs[0]["routes"][0], "seeds": [r["seed"] for r in runs],
                                 "params": runs[0]["params"], "routes": {}}
        for route in runs[0]["routes"]:
            per_seed = {str(r["seed"]): {lang: score(kind, gold[lang], r["predictions"][route][lang]) for lang in langs}
                        for r in runs}
            scores = {lang: mean(s[lang]["f1"] for s in per_seed.values()) for lang in langs}
            block: dict[str, Any] = {"scores": scores, "avg": mean(scores.values()), "per_seed": per_seed}
            if kind == "qa":
                block["exact_match"] = {lang: mean(s[lang]["exact_match"] for s in per_seed.values()) for lang in langs}
            entry["routes"][route] = block
        methods[method_dir.name] = entry
    if BASELINE in methods:
        base = methods[BASELINE]["routes"][methods[BASELINE]["primary"]]["scores"]
        for entry in methods.values():
            for block in entry["routes"].values():
                block["win_ratio"] = win_ratio(block["scores"], base, langs)
    return {"kind": kind, "languages": langs, "metric": "span F1 (seqeval)" if kind == "ner" else "SQuAD v1.1 F1",
            "methods": methods}


def _md(summary: dict[str, Any]) -> str:
    lines = ["# NER / QA on XLM-R: test scores (mean over seeds)", ""]
    for name, t in summary["tasks"].items():
        langs = t["languages"]
        lines += [f"## {name} ({t['metric']})", "",
                  "| method | route | " + " | ".join(langs) + " | avg | WR (%) | #params train | #params inference |",
                  "|" + " --- |" * (len(langs) + 6)]
        for method, entry in t["methods"].items():
            for route, b in entry["routes"].items():
                wr = b.get("win_ratio")
                cells = [f"{b['scores'][lang]:.2f}" for lang in langs]
                lines.append(f"| {method} | {route} | " + " | ".join(cells) + f" | {b['avg']:.2f} | "
                             f"{'-' if wr is None or method == BASELINE else f'{wr:.0f}'} | "
                             f"{entry['params']['train'] / 1e6:.3f}M | "
                             f"{entry['params']['inference'][route] / 1e6:.3f}M |")
        lines.append("")
    return "\n".join(lines)


def evaluate(tasks: tuple[str, ...], data_root: Path, results_root: Path, out: Path) -> dict[str, Any]:
    """Score every task of ``tasks``; write ``out/summary.{json,md}`` atomically."""
    summary = {"tasks": {name: evaluate_task(name, data_root / name, results_root / name) for name in tasks}}
    with atomic_dir(out) as tmp:
        write_json(tmp / "summary.json", summary)
        with atomic_write(tmp / "summary.md") as fh:
            fh.write(_md(summary))
    for name, t in summary["tasks"].items():
        for method, entry in t["methods"].items():
            for route, b in entry["routes"].items():
                log.info("%s %s (%s): avg %.2f", name, method, route, b["avg"])
    return summary
