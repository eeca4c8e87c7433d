"""The first screen of ``reports/index.html`` and the opening of ``reports/README.md``: the answer of the selected
experiment, with its scale, written once in Markdown (the page renders it: ``lsnmt/report/html.py``).

Three parts, all read from files other stages wrote (nothing is computed here):

1. **The scale**: CPU or GPU (the device of the run's trainings: their run records, else the training start lines
   of ``logs/{exp}/train/``), the stages' minutes (the sum of the ``done in N s`` lines of ``logs/{exp}/``,
   :mod:`lsnmt.runner.console`), the versions and machine that ran (the run records the evaluation gathered,
   ``results/{exp}/evaluate/run.json``: :mod:`lsnmt.record`; never the machine that builds the report), and
   "smoke test" where every system's output is degenerate (``lsnmt/eval/degenerate.py``): such scores show that
   the pipeline works, not translation quality.
2. **Translation**: each system against naive on each test set of ``results/{exp}/evaluate/summary.json``:
   the first metric's average over all directions, the difference, the per-direction paired bootstrap's counts
   (better / worse / not significant / untested; the evaluate stage tests each direction, so there is no pooled
   interval) and a verdict.
3. **The claim** (``results/{exp}/claim/summary.json``, :mod:`lsnmt.report.claim_answer`): its task, budget and
   seeds, each claim with the systems it compares, the BLEU difference with its 95% interval, the seeds on its
   side, the verdict and its source, and the caveats its numbers call for.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsnmt import record
from lsnmt.report.claim_answer import claim_md, md_table
from lsnmt.report.runs import Results
from lsnmt.report.specs import claim as claim_spec

DONE = re.compile(r": (?:\[\d+/\d+\] )?(\S+): done in (\d+) s$")
"""A stage's end line, with its place in the run under DVC (``[12/41] train: done in 60 s``: ``console.place``)."""
DEVICE = re.compile(r"parameters .*, device (\S+),")


def run_info(logs: Path) -> dict[str, Any]:
    """``{"seconds": sum of the stages' wall times, "stages": how many, "devices": training devices}`` from the
    log files under ``logs`` (``logs/{exp}``) and the shared ``params`` stage's beside it (``logs/params.log``, one
    for every experiment); zero stages when there are none."""
    seconds, stages, devices = 0, 0, set()
    shared = [logs.parent / "params.log"] if (logs.parent / "params.log").is_file() else []
    for path in [*(sorted(logs.rglob("*.log")) if logs.is_dir() else []), *shared]:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if m := DONE.search(line):
                seconds, stages = seconds + int(m.group(2)), stages + 1
            elif m := DEVICE.search(line):
                devices.add(m.group(1).split(":")[0])
    return {"seconds": seconds, "stages": stages, "devices": sorted(devices)}


def ran_on(rec: Mapping[str, Any] | None) -> str:
    """Where and with what the run's trainings and its evaluation ran (:func:`lsnmt.record.describe`)."""
    if rec is None:
        return (
            "Versions and machine: not recorded (no `evaluate/run.json`: results written before run records existed)."
        )
    trained: dict[str, list[str]] = {}
    for method, r in sorted((rec.get("train") or {}).items()):
        trained.setdefault(record.describe(r) if r else "a machine not recorded", []).append(method)
    evaluated = record.describe(rec)
    if list(trained) == [evaluated]:
        return f"Trained and evaluated on {evaluated}."
    parts = [f"{', '.join(m)} trained on {d}" for d, m in trained.items()] or ["trainings not recorded"]
    return f"{'; '.join(parts)}; evaluated on {evaluated}."


def scale_md(info: Mapping[str, Any], rec: Mapping[str, Any] | None, smoke: bool) -> str:
    """``**Scale: CPU**, N stages, M minutes of stage time. Trained and evaluated on ...``."""
    devices = {r.get("device") for r in ((rec or {}).get("train") or {}).values()} | set(info["devices"])
    devices.discard(None)
    kind = "GPU" if "cuda" in devices else "CPU" if devices else "device unknown (no training record or log)"
    took = (
        f"{info['stages']} stages, {info['seconds'] / 60:.1f} minutes of stage time"
        if info["stages"]
        else "stage times not logged"
    )
    text = f"**Scale: {kind}**, {took}. {ran_on(rec)}"
    if smoke:
        text += (
            " **Smoke test**: every translation system's output is degenerate (below 1 BLEU or near-empty), "
            "so its scores show a working pipeline, not translation quality (that needs the GPU scale, "
            "`SCALE=gpu ./run.sh`); the answer at this scale is the small-scale claim below."
        )
    return text


def translation_rows(summary: Mapping[str, Any]) -> list[list[str]]:
    """One row per system on this test set: score, Δ vs the baseline, per-direction tests, verdict."""
    metric, base = summary["metrics"][0], summary.get("baseline")
    degenerate = summary.get("degenerate", {}).get("systems", {})
    rows = []
    for system in summary["methods"]:
        score = summary["scores"][system][metric]["averages"]["all"]
        if system == base:
            rows.append([system, f"{score:.2f}", "(baseline)", "", "smoke test" if system in degenerate else ""])
            continue
        if base not in summary["scores"]:
            rows.append([system, f"{score:.2f}", "no baseline", "", ""])
            continue
        delta = score - summary["scores"][base][metric]["averages"]["all"]
        o = summary.get("significance", {}).get(system, {}).get(metric, {}).get("outcomes", {})
        tests = f"{o.get('better', 0)} / {o.get('worse', 0)} / {o.get('not_significant', 0)} / {o.get('degenerate', 0)}"
        if system in degenerate or base in degenerate:
            verdict = "smoke test: degenerate output, no verdict"
        elif o.get("better", 0) > o.get("worse", 0):
            verdict = f"better on {o['better']} directions"
        elif o.get("worse", 0) > o.get("better", 0):
            verdict = f"worse on {o['worse']} directions"
        else:
            verdict = "no clear difference"
        rows.append([system, f"{score:.2f}", f"{delta:+.2f}", tests, verdict])
    return rows


def translation_md(summary: Mapping[str, Any]) -> tuple[str, bool]:
    """Every test set's table, and whether every system is degenerate on every test set (a smoke test)."""
    sets = [summary, *summary.get("test_sets", {}).values()]
    sets = [s for s in sets if s.get("metrics") and s.get("scores") and s.get("methods")]
    if not sets:
        return "Translation: the evaluation summary holds no scores.", False
    parts, smoke = [], True
    for one in sets:
        metric = one["metrics"][0]
        smoke &= set(one["methods"]) <= set(one.get("degenerate", {}).get("systems", {}))
        header = [
            "system",
            f"{metric} (average, all directions)",
            "Δ vs naive",
            "directions better / worse / n.s. / untested",
            "verdict",
        ]
        parts += [
            f"### Translation: {one.get('label') or one.get('test_set', 'test')}",
            md_table(header, translation_rows(one)),
        ]
    return "\n\n".join(parts), smoke


def _json(path: Path) -> dict[str, Any] | None:
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def headline_md(results: Results, logs: Path = Path("logs")) -> str:
    """The answer (module docstring) as Markdown; ``logs``: the folder of ``logs/{exp}``."""
    exp = results.params.get()
    run = results.run(exp.name)
    summary = run.summary if run is not None else None
    root = results.results_dir / exp.name
    claim = claim_md(_json(root / "claim" / "summary.json"), claim_spec.table_link(exp.name))
    translation, smoke = translation_md(summary) if summary else ("Translation: not run.", False)
    scale = scale_md(run_info(logs / exp.name), record.read(root / "evaluate" / record.NAME), smoke)
    return (
        "\n\n".join([f"## The answer: `{exp.name}`", scale, *((claim, translation) if smoke else (translation, claim))])
        + "\n"
    )
