"""The claim's tables and caption, rendered from ``summary.json`` (the stage's ``summary.md`` and the report's
``tables/ours/claim-<exp>``): the claims with their sources and verdicts, then every system's scores. No torch:
the report imports it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lsnmt.methods import NAIVE

CLAIM_HEADER = ["claim", "source", "compared", "parameters", "Δ BLEU [95% CI]", "p", "Δ exact [95% CI]",
                "seeds better", "verdict"]
SYSTEM_HEADER = ["system", "method", "params total", "params shared", "params per direction", "BLEU [95% CI]",
                 "exact % [95% CI]", "BLEU per seed", "Δ BLEU vs naive [95% CI]"]


def _ci(x: float, ci: list[float], signed: bool = False) -> str:
    f = "{:+.2f}" if signed else "{:.2f}"
    return f"{f.format(x)} [{f.format(ci[0])}, {f.format(ci[1])}]"


def method(s: Mapping[str, Any]) -> str:
    """``kind: key value, …`` of a system's method entry, with its route; a dense baseline's shape."""
    if s["kind"] is None:
        if s.get("dense"):
            return "naive, " + ", ".join(f"{k} {v}" for k, v in s["settings"].items())
        return "naive (the base model alone)"
    parts = [f"{k} {v}" for k, v in s["settings"].items() if k not in ("kind", "route")]
    parts += [f"route {s['route']}"] if s["route"] else []
    return f"{s['kind']}: {', '.join(parts)}" if parts else s["kind"]


def _comparison(summary: Mapping[str, Any], system: str | None, baseline: str | None) -> Mapping[str, Any] | None:
    return next((c for c in summary["comparisons"] if c["system"] == system and c["baseline"] == baseline), None)


def claim_rows(summary: Mapping[str, Any]) -> list[list[str]]:
    """One row per claim: its source, the systems compared and their counts, the differences, the verdict."""
    out = []
    for v in summary["claims"]:
        c = _comparison(summary, v["system"], v["baseline"])
        compared = f"{v['system']} vs {v['baseline']}" if v["baseline"] else (v["system"] or "")
        line = [v["claim"], v["source"], compared, v["parameters"]]
        if c is None:
            line += ["", "", "", ""]
        else:
            p = "n/a" if c["bleu"]["p"] is None else f"{c['bleu']['p']:.3g}"
            line += [_ci(c["bleu"]["delta"], c["bleu"]["ci"], True), p,
                     _ci(c["exact"]["delta"], c["exact"]["ci"], True), f"{c['seeds_better']}/{len(c['per_seed'])}"]
        out.append([*line, f"{v['status']}" + ("" if v["status"] == "shown" else f" ({v['because']})")])
    return out


def system_rows(summary: Mapping[str, Any]) -> list[list[str]]:
    out = []
    for name in summary["order"]:  # summary.json's keys are sorted
        s, c = summary["systems"][name], _comparison(summary, name, NAIVE)
        p = s["params"]
        seeds = ", ".join(f"{r['bleu']:.1f}" for r in s["per_seed"].values())
        line = [name, method(s), f"{p['total']:,}", f"{p['shared']:,}", f"{p['inference']:,}",
                _ci(s["bleu"], s["bleu_ci"]), _ci(s["exact"], s["exact_ci"]), seeds]
        out.append([*line, "(baseline)" if c is None else _ci(c["bleu"]["delta"], c["bleu"]["ci"], True)])
    return out


def caption(summary: Mapping[str, Any]) -> str:
    """What was measured: task, model, the fixed budget, seeds, the bootstrap; ours only."""
    cfg, m, t = summary["config"], summary["config"]["model"], summary["config"]["train"]
    langs = cfg["languages"]
    order = "; ".join(f"{k}: {', '.join(cfg.get(k, [])) or 'none'}" for k in ("reverse", "scramble"))
    sent = cfg["sentences"]
    r = len(cfg["seeds"])
    df = f"t on {r - 1} degrees of freedom (seeds - 1)" if r > 1 else "one seed: sentence noise alone"
    return (
        f"Ours only (no paper counterpart): the papers' claims at small scale on the synthetic task of "
        f"lsnmt.data.synthetic (experiment `{summary['experiment']}`): {len(langs)} languages ({', '.join(langs)}; "
        f"word order {order}) of {cfg['concepts']} concepts each, sentences of {cfg['min_len']}-{cfg['max_len']} "
        f"concepts, {sent['train']} training and {sent['test']} test sentences per direction, "
        f"{len(summary['directions'])} {langs[0]}-centric directions. Naive is the base Transformer "
        f"({m['embed_dim']}/{m['ffn_dim']}, {m['heads']} heads, {m['encoder_layers']}+{m['decoder_layers']} layers); "
        f"LS methods add their parameters to it, dense baselines widen it; 'shared' counts the parameters every "
        f"direction uses, 'per direction' those one direction uses at test time. Fixed budget: every job trains "
        f"{t['max_steps']:,} updates of {t['max_tokens']:,} tokens (lr {t['lr']}, {t['warmup_steps']} warm-up "
        f"updates), seeds {', '.join(map(str, cfg['seeds']))}. BLEU (sacreBLEU on token ids, tokenize none) and "
        f"exact match over all seeds and directions ({summary['items']:,} test items per system), beam "
        f"{cfg['beam']}. Intervals: 95% over seeds and sentences (the crossed design, Owen 2007: lsnmt.claim.interval"
        f"), estimate ± t·se, se² = the variance of the {len(cfg['seeds'])} per-seed values / {len(cfg['seeds'])} + "
        f"the variance over {cfg['bootstrap_samples']:,} sentence resamples (each sentence with its outputs in every "
        f"direction and seed; both systems of a comparison on the same resamples), {df}; p: two-sided, from the same "
        f"t. A claim is shown when the interval of its BLEU difference lies above 0 and it holds on every seed. "
        f"Claims marked 'Ours' are extensions no paper makes.")


def md_table(header: list[str], body: list[list[str]]) -> str:
    """``lsnmt.report.render.md_table`` (not imported: that module pulls in the report's table machinery)."""
    esc = [[x.replace("|", "\\|") for x in r] for r in [header, *body]]
    return "\n".join(["| " + " | ".join(esc[0]) + " |", "| " + " | ".join("---" for _ in header) + " |",
                      *("| " + " | ".join(r) + " |" for r in esc[1:])])


def _saturation(summary: Mapping[str, Any]) -> str:
    """Naive's validation loss along the budget, per seed (whether it still learns at the end)."""
    rows = [f"s{k.rsplit('-s', 1)[1]}: " + ", ".join(f"{p['valid_loss']:.3f} @{p['step']}" for p in curve)
            for k, curve in summary.get("curves", {}).items() if k.rsplit("-s", 1)[0] == NAIVE]
    return f"Naive's validation loss (bits per token) along the budget: {'; '.join(rows)}." if rows else ""


def markdown(summary: Mapping[str, Any], figure: str | None = None) -> str:
    """Both tables with the caption, naive's curve and the figure link; "not configured" says so."""
    if summary.get("status") != "measured":
        return f"# Small-scale claims (ours only)\n\nNot measured: {summary.get('reason', 'not configured')}.\n"
    t = summary["timing"]
    parts = ["# The papers' claims at small scale (ours only)", "", f"*{caption(summary)}*", "",
             md_table(CLAIM_HEADER, claim_rows(summary)), "", md_table(SYSTEM_HEADER, system_rows(summary)), "",
             _saturation(summary), "",
             f"Measured in {t['wall_seconds']:.0f} s wall, {t['cpu_seconds']:.0f} s CPU ({t['cpu_threads']} "
             f"thread(s)); the jobs took {t.get('train_seconds', 0):.0f} s when they ran.", ""]
    if figure:
        parts += [f"![BLEU and exact match per system]({figure})", ""]
    return "\n".join(parts)
