"""The claim's table and caption, rendered from ``summary.json`` (the stage's ``summary.md`` and the report's
``tables/ours/claim-<exp>``). No torch: the report imports it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

HEADER = ["system", "method", "params total", "params shared", "BLEU [95% CI]", "exact % [95% CI]",
          "Δ BLEU vs naive [95% CI]", "p", "Δ exact vs naive [95% CI]", "verdict"]


def _ci(x: float, ci: list[float], signed: bool = False) -> str:
    f = "{:+.2f}" if signed else "{:.2f}"
    return f"{f.format(x)} [{f.format(ci[0])}, {f.format(ci[1])}]"


def method(s: Mapping[str, Any]) -> str:
    """``kind: key value, …`` of a system's method entry, with its route."""
    if s["kind"] is None:
        return "naive (the shared model alone)"
    parts = [f"{k} {v}" for k, v in s["settings"].items() if k not in ("kind", "route")]
    parts += [f"route {s['route']}"] if s["route"] else []
    return f"{s['kind']}: {', '.join(parts)}" if parts else s["kind"]


def verdict(c: Mapping[str, Any]) -> str:
    t, n = c["bleu"], len(c["per_seed"])
    if t["significant"] is None:
        return f"n/a ({t['degenerate']})"
    if not t["significant"]:
        return f"not significant ({c['seeds_better']}/{n} seeds better)"
    return f"{'better' if t['delta'] > 0 else 'worse'} ({c['seeds_better']}/{n} seeds better)"


def rows(summary: Mapping[str, Any]) -> list[list[str]]:
    out = []
    vs = {c["system"]: c for c in summary["comparisons"] if c["baseline"] == summary["baseline"]}
    for name in summary["order"]:  # summary.json's keys are sorted
        s = summary["systems"][name]
        line = [name, method(s), f"{s['params']['total']:,}", f"{s['params']['shared']:,}",
                _ci(s["bleu"], s["bleu_ci"]), _ci(s["exact"], s["exact_ci"])]
        c = vs.get(name)
        if c is None:
            line += ["(baseline)", "", "", ""]
        else:
            p = "n/a" if c["bleu"]["p"] is None else f"{c['bleu']['p']:.3g}"
            line += [_ci(c["bleu"]["delta"], c["bleu"]["ci"], True), p,
                     _ci(c["exact"]["delta"], c["exact"]["ci"], True), verdict(c)]
        out.append(line)
    return out


def caption(summary: Mapping[str, Any]) -> str:
    """What was measured: task, model, updates, seeds, bootstrap; ours only."""
    cfg, m, t = summary["config"], summary["config"]["model"], summary["config"]["train"]
    langs = cfg["languages"]
    rev = ", ".join(cfg["reverse"]) or "none"
    sent = cfg["sentences"]
    return (f"Ours only (no paper counterpart): the small-scale claim of LMS-FD Sec. 1 and LSL Sec. 1 on the "
            f"synthetic task of lsnmt.data.synthetic (experiment `{summary['experiment']}`): {len(langs)} languages "
            f"({', '.join(langs)}; reversed word order: {rev}) of {cfg['concepts']} concepts each, sentences of "
            f"{cfg['min_len']}-{cfg['max_len']} concepts, {sent['train']} training and {sent['test']} test sentences "
            f"per direction, {len(summary['directions'])} {langs[0]}-centric directions. Every method trains the same "
            f"base Transformer ({m['embed_dim']}/{m['ffn_dim']}, {m['heads']} heads, {m['encoder_layers']}+"
            f"{m['decoder_layers']} layers; LS methods add parameters on top; 'shared' counts the parameters every "
            f"direction uses) for {t['max_steps']:,} updates of {t['max_tokens']:,} tokens, seeds "
            f"{', '.join(map(str, cfg['seeds']))}. BLEU (sacreBLEU on token ids, tokenize none) and exact match "
            f"over all seeds and directions ({summary['items']:,} test items per system), beam {cfg['beam']}; "
            f"paired bootstrap against naive (lsnmt.eval.significance, {cfg['bootstrap_samples']:,} resamples, "
            f"alpha {cfg['significance']}), 95% intervals from the resampled deltas. An ordering is shown when the "
            f"difference is positive, significant and holds on every seed. Equal updates, not convergence.")


def orderings(summary: Mapping[str, Any]) -> list[str]:
    return [f"- **{o['claim']}**: {o['status']} ({o['because']})" for o in summary["orderings"]]


def md_table(header: list[str], body: list[list[str]]) -> str:
    """``lsnmt.report.render.md_table`` (not imported: that module pulls in the report's table machinery)."""
    esc = [[x.replace("|", "\\|") for x in r] for r in [header, *body]]
    return "\n".join(["| " + " | ".join(esc[0]) + " |", "| " + " | ".join("---" for _ in header) + " |",
                      *("| " + " | ".join(r) + " |" for r in esc[1:])])


def markdown(summary: Mapping[str, Any], figure: str | None = None) -> str:
    """The whole table with its caption, the orderings and the figure link; "not configured" says so."""
    if summary.get("status") != "measured":
        return f"# Small-scale claim (ours only)\n\nNot measured: {summary.get('reason', 'not configured')}.\n"
    t = summary["timing"]
    parts = ["# Small-scale claim: language-specific capacity vs naive (ours only)", "", f"*{caption(summary)}*", "",
             md_table(HEADER, rows(summary)), "", "Orderings (BLEU):", "", *orderings(summary), "",
             f"Measured in {t['wall_seconds']:.0f} s wall, {t['cpu_seconds']:.0f} s CPU "
             f"({t['cpu_threads']} thread(s)).", ""]
    if figure:
        parts += [f"![BLEU and exact match per system]({figure})", ""]
    return "\n".join(parts)
