"""The first screen of ``reports/index.html``: the answer of the selected experiment, with its scale.

Three parts, all read from files other stages wrote (nothing is computed here):

1. **The scale**: CPU or GPU (the device the training start lines of ``logs/{exp}/train/`` name), the machine (the
   processor and cores the report runs on: the machine of a ``dvc repro``), the stages' minutes (the sum of the
   ``done in N s`` lines of ``logs/{exp}/``, :mod:`lsnmt.runner.console`), and "smoke test" where every system's
   output is degenerate (``lsnmt/eval/degenerate.py``): such scores show that the pipeline works, not translation
   quality.
2. **Translation**: each system against naive on each test set of ``results/{exp}/evaluate/summary.json``:
   the first metric's average over all directions, the difference, the per-direction paired bootstrap's counts
   (better / worse / not significant / untested; the evaluate stage tests each direction, so there is no pooled
   interval) and a verdict.
3. **The claim** (``results/{exp}/claim/summary.json``): each of the papers' claims, the systems it compares, the
   difference in BLEU with its 95% interval, the seeds on its side, the verdict and the paper section it cites.
"""

from __future__ import annotations

import html
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsnmt.claim.table import claim_rows
from lsnmt.report.item import anchor
from lsnmt.report.runs import Results

DONE = re.compile(r": (\S+): done in (\d+) s$")
DEVICE = re.compile(r"parameters .*, device (\S+),")


def machine() -> str:
    """The processor model and core count of this machine (``/proc/cpuinfo``), e.g. ``AMD EPYC 7B13, 2 cores``."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model or 'unknown processor'}, {os.cpu_count() or '?'} cores"


def run_info(logs: Path) -> dict[str, Any]:
    """``{"seconds": sum of the stages' wall times, "stages": how many, "devices": training devices}`` from the
    log files under ``logs`` (``logs/{exp}``); zero stages when there are none."""
    seconds, stages, devices = 0, 0, set()
    for path in sorted(logs.rglob("*.log")) if logs.is_dir() else []:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if m := DONE.search(line):
                seconds, stages = seconds + int(m.group(2)), stages + 1
            elif m := DEVICE.search(line):
                devices.add(m.group(1).split(":")[0])
    return {"seconds": seconds, "stages": stages, "devices": sorted(devices)}


def scale_line(info: Mapping[str, Any], smoke: bool) -> str:
    """``Scale: CPU (machine), N stages in M min: smoke test ...``."""
    kind = "GPU" if "cuda" in info["devices"] else "CPU" if info["devices"] else "device unknown (no training log)"
    took = (
        f"{info['stages']} stages, {info['seconds'] / 60:.1f} minutes of stage time"
        if info["stages"]
        else "stage times not logged"
    )
    text = f"<b>Scale: {kind}</b> ({html.escape(machine())}), {took}."
    if smoke:
        text += (
            " <b>Smoke test</b>: every translation system's output is degenerate (below 1 BLEU or near-empty), "
            "so its scores show a working pipeline, not translation quality (that needs the GPU scale, "
            "<code>SCALE=gpu ./run.sh</code>); the answer at this scale is the small-scale claim below."
        )
    return f'<p class="scale">{text}</p>'


def _table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows)
    return f'<div class="scroll"><table class="headline"><tr>{head}</tr>{body}</table></div>'


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


def translation_html(summary: Mapping[str, Any]) -> tuple[str, bool]:
    """Every test set's table, and whether every system is degenerate on every test set (a smoke test)."""
    sets = [summary, *summary.get("test_sets", {}).values()]
    sets = [s for s in sets if s.get("metrics") and s.get("scores") and s.get("methods")]
    if not sets:
        return "<p>Translation: the evaluation summary holds no scores.</p>", False
    parts, smoke = [], True
    for one in sets:
        metric = one["metrics"][0]
        smoke &= set(one["methods"]) <= set(one.get("degenerate", {}).get("systems", {}))
        parts += [
            f"<h3>Translation: {html.escape(str(one.get('label') or one.get('test_set', 'test')))}</h3>",
            _table(
                [
                    "system",
                    f"{metric} (average, all directions)",
                    "Δ vs naive",
                    "directions better / worse / n.s. / untested",
                    "verdict",
                ],
                translation_rows(one),
            ),
        ]
    return "\n".join(parts), smoke


def claim_html(summary: Mapping[str, Any] | None, name: str) -> str:
    """The papers' claims at small scale: each with its source, the systems compared, the difference in BLEU
    with its 95% interval (seeds and sentences resampled), the seeds on its side and the verdict."""
    if summary is None:
        return "<p>The small-scale claim: not run (no <code>claim/summary.json</code>).</p>"
    if summary.get("status") != "measured":
        return f"<p>The small-scale claim: not measured ({html.escape(str(summary.get('reason', '')))}).</p>"
    rows = [[r[0], r[2], r[4], r[7], r[8], r[1]] for r in claim_rows(summary)]
    full = anchor("ours", "Small-scale claim: " + name)
    return "\n".join(
        [
            "<h3>The claim at small scale: language-specific capacity against naive (ours only)</h3>",
            _table(["claim", "compared", "Δ BLEU [95% CI]", "seeds better", "verdict", "source"], rows),
            f'<p class="files">Task, model, budget and parameter counts: <a href="#{full}">the full claim table</a> '
            "below.</p>",
        ]
    )


def headline_html(results: Results, logs: Path = Path("logs")) -> str:
    """The page's first section (module docstring); ``logs``: the folder of ``logs/{exp}``."""
    exp = results.params.get()
    run = results.run(exp.name)
    summary = run.summary if run is not None else None
    claim_path = results.results_dir / exp.name / "claim" / "summary.json"
    claim = json.loads(claim_path.read_text(encoding="utf-8")) if claim_path.is_file() else None
    translation, smoke = translation_html(summary) if summary else ("<p>Translation: not run.</p>", False)
    return "\n".join(
        [
            f'<h2 id="answer">The answer: <code>{html.escape(exp.name)}</code></h2>',
            scale_line(run_info(logs / exp.name), smoke),
            claim_html(claim, exp.name) if smoke else translation,
            translation if smoke else claim_html(claim, exp.name),
        ]
    )
