"""The small-scale claim on the report's first screen, in Markdown, from the claim stage's ``summary.json`` alone:
what was measured (a synthetic task, the budget, the seeds), each claim's verdict in words that cannot be misread,
and the caveats its own numbers call for.

Verdicts: the claim stage records ``shown``, ``not shown`` or ``not measured`` (``lsnmt.claim.claims``); read as
English, "not shown" means "not displayed". The report says **established**, **not established** (at this
budget: the interval and the seeds say by how much) and **not tested** (no system meets the claim's parameter
condition).

Caveats, each only where the summary calls for it:

* an established claim against a *dense* baseline that scores below naive, the smaller model: at this budget the
  wider model learns more slowly, so the margin is over a slow baseline, not evidence about capacity;
* naive's validation loss still falling over the last interval of the budget: the budget stops before
  convergence, so differences are partly learning speed;
* p-values that repeat: the bootstrap resamples the ``S`` seeds as well (``lsnmt.claim.bootstrap``), so with few
  seeds it has only ``C(2S-1, S)`` seed draws (3 with 2 seeds, each seed alone with probability ``S^-S`` = 1/4),
  and p moves in steps of about that probability.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from math import comb
from typing import Any

from lsnmt.claim.markdown import claim_rows

VERDICTS = {"shown": "established", "not shown": "not established", "not measured": "not tested"}
"""The claim stage's status -> the report's word."""
LEGEND = (
    "**established**: the claim stage's test passed (its rule: `lsnmt.claim.stats.better`, docs/claim.md); "
    "**not established**: it did not, at this budget (the interval and the seeds say by how much); **not tested**: "
    "no system meets the claim's parameter condition."
)


def word(status: str) -> str:
    """The report's verdict for a claim stage status (an unknown one is shown as it is)."""
    return VERDICTS.get(status, status)


def md_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table, ``|`` escaped in every cell."""
    esc = [[c.replace("|", "\\|") for c in r] for r in [header, *rows]]
    lines = ["| " + " | ".join(esc[0]) + " |", "|" + " --- |" * len(header)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in esc[1:]])


def task_line(summary: Mapping[str, Any]) -> str:
    """What was measured: the synthetic task, the model, the budget and the seeds (``summary["config"]``)."""
    cfg, t, m = summary["config"], summary["config"]["train"], summary["config"]["model"]
    langs = cfg["languages"]
    order = "; ".join(
        f"{w}: {', '.join(cfg[k])}" for k, w in (("reverse", "reversed"), ("scramble", "scrambled")) if cfg.get(k)
    )
    return (
        f"**A synthetic task, not translation**: {len(langs)} artificial languages ({', '.join(langs)}"
        f"{'; word order ' + order if order else ''}) over {cfg['concepts']} concepts, scored by BLEU on token ids "
        f"(`lsnmt.data.synthetic`), so a BLEU gain here is a gain on this task. **Budget**: every system trains "
        f"{t['max_steps']:,} updates of {t['max_tokens']:,} tokens per seed (seeds "
        f"{', '.join(map(str, cfg['seeds']))}); naive is {m['embed_dim']}-dimensional, "
        f"{m['encoder_layers']}+{m['decoder_layers']} layers."
    )


def _slow_dense(summary: Mapping[str, Any]) -> list[str]:
    """An established claim over a dense baseline that scores below the smaller naive model."""
    systems, out = summary["systems"], []
    naive = systems.get(summary.get("baseline", "naive"))
    for v in summary["claims"]:
        base = systems.get(v["baseline"] or "")
        if v["status"] != "shown" or not base or not base.get("dense") or naive is None or base is naive:
            continue
        if base["bleu"] >= naive["bleu"]:
            continue
        seeds = [s for s in naive["per_seed"] if s in base["per_seed"]]
        below = sum(base["per_seed"][s]["bleu"] < naive["per_seed"][s]["bleu"] for s in seeds)
        out.append(
            f"*{v['claim']}* is established against {v['baseline']} ({base['params']['total']:,} parameters), "
            f"which scores below naive itself ({naive['params']['total']:,}): {base['bleu']:.1f} against "
            f"{naive['bleu']:.1f} BLEU, lower on {below} of {len(seeds)} seeds. At this budget the wider model learns "
            "more slowly, so the margin is over a slow baseline, not evidence about capacity."
        )
    return out


def _still_learning(summary: Mapping[str, Any]) -> list[str]:
    """Naive's validation loss over the last interval of each seed's curve, where it still falls."""
    base = summary.get("baseline", "naive")
    falling = []
    for job, curve in sorted(summary.get("curves", {}).items()):
        system, _, seed = job.rpartition("-s")
        points = [p for p in curve if p.get("valid_loss") is not None]
        if system != base or len(points) < 2 or points[-1]["valid_loss"] >= points[-2]["valid_loss"]:
            continue
        a, b = points[-2], points[-1]
        falling.append(
            f"seed {seed}: {a['valid_loss']:.3f} → {b['valid_loss']:.3f} from update {a['step']:,} to {b['step']:,}"
        )
    if not falling:
        return []
    return [
        f"Naive was still learning when the budget ended (validation loss, bits per token: {'; '.join(falling)}"
        "): the differences are partly learning speed, not what each model can reach."
    ]


def _quantised(summary: Mapping[str, Any]) -> list[str]:
    """The p-values' steps when the bootstrap resamples few seeds, with how often a p-value repeats."""
    cfg = summary["config"]
    s = len(cfg["seeds"])
    if not cfg.get("resample_seeds", True) or s < 2 or s**-s < 0.01:
        return []
    by_claim = {(v["system"], v["baseline"]) for v in summary["claims"]}
    ps = [
        c["bleu"]["p"]
        for c in summary["comparisons"]
        if (c["system"], c["baseline"]) in by_claim and c["bleu"].get("p") is not None
    ]
    if not ps:
        return []
    p, n = Counter(round(x, 3) for x in ps).most_common(1)[0]
    repeat = f"; {n} of the claims' {len(ps)} p-values are {p:.3g}" if n > 1 else ""
    return [
        f"The p-values are coarse: the bootstrap resamples the {s} seeds too, which allows only "
        f"{comb(2 * s - 1, s)} seed draws (the rarest, one seed drawn every time, has probability "
        f"1/{s**s} = {s**-s:.3g}), so p moves in steps of about {s**-s:.3g}{repeat}."
    ]


def claim_md(summary: Mapping[str, Any] | None, link: str) -> str:
    """The claim's part of the first screen; ``link``: its full table (``tables/ours/claim-<exp>.md``)."""
    title = "### The claim at small scale: language-specific capacity against naive (ours only)"
    if summary is None:
        return f"{title}\n\nNot run (no `claim/summary.json`)."
    if summary.get("status") != "measured":
        return f"{title}\n\nNot measured ({summary.get('reason', '')})."
    rows = [
        [r[0], r[2], r[4], r[7], word(v["status"]), r[1]]
        for r, v in zip(claim_rows(summary), summary["claims"], strict=True)
    ]
    caveats = [LEGEND, *_slow_dense(summary), *_still_learning(summary), *_quantised(summary)]
    return "\n\n".join(
        [
            title,
            task_line(summary),
            md_table(["claim", "compared", "Δ BLEU [95% CI]", "seeds better", "verdict", "source"], rows),
            "\n".join(f"- {c}" for c in caveats),
            f"Model, parameter counts, p-values and every system's scores: [the full claim table]({link}).",
        ]
    )
