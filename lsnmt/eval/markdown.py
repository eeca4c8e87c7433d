"""Markdown tables of an experiment's summary (``summary.md`` next to ``summary.json``): one section per test set,
the primary one (``summary.json``'s top level) first, then each of ``test_sets`` (e.g. the held-out Tatoeba set),
headed by what it measures (``label``: in-domain held-out, out-of-domain).

Degenerate systems (``lsnmt/eval/degenerate.py``) are marked ``(degenerate)`` after their name; a system with
no verdict against the baseline reads ``n/a`` for win ratio and significance, and the directions of a pair left
untested count as ``n/a``; the caption at the top says why."""

from __future__ import annotations

from typing import Any


def _fmt(x: Any, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def _sig(summary: dict[str, Any], method: str, metric: str) -> str:
    """``better / worse`` against the baseline, ``(k n/a)`` for untested directions; ``n/a`` when none is tested."""
    sig = summary["significance"].get(method, {}).get(metric, {}).get("outcomes")
    if not sig:
        return "–"
    untested = sig.get("degenerate", 0)
    if untested == sum(sig.values()):
        return "n/a"
    return f"{sig['better']} / {sig['worse']}" + (f" ({untested} n/a)" if untested else "")


def metric_table(summary: dict[str, Any], metric: str) -> list[str]:
    """One row per method: averages per direction set, win ratio and significance counts against the baseline."""
    sets = list(summary["direction_sets"])
    flags = summary.get("degenerate", {})
    head = ["method", *sets, "WR all (%)", "sig. better / worse"]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method in summary["methods"]:
        avg = summary["scores"][method][metric]["averages"]
        wr = summary["win_ratio"].get(method, {}).get(metric, {}).get("all")
        wr_txt = "n/a" if method in flags.get("pairs", {}) else _fmt(wr, 1)
        label = method + (" (degenerate)" if method in flags.get("systems", {}) else "")
        rows.append("| " + " | ".join([label, *(_fmt(avg[s]) for s in sets), wr_txt, _sig(summary, method, metric)])
                    + " |")
    return rows


def degenerate_note(summary: dict[str, Any]) -> list[str]:
    """Why systems are marked degenerate and which comparisons carry no verdict (none: no lines)."""
    flags = summary.get("degenerate", {})
    untested = any(t["outcomes"].get("degenerate") for m in summary["significance"].values() for t in m.values())
    if not (flags.get("systems") or flags.get("pairs") or untested):
        return []
    bleu = f"{flags['score']} BLEU (`{flags['score_metric']}`)" if flags.get("score_metric") else None
    rule = (f"Degenerate output (evaluate.degenerate_length_ratio, evaluate.degenerate_score): hypotheses with "
            f"fewer than {flags['length_ratio']} of the references' non-space characters"
            + (f", or an average below {bleu}" if bleu else "") + ". No significance verdict and no win ratio "
            "(n/a) between two outputs of which either is that short" + (", or both below that BLEU" if bleu else "")
            + ", on a direction or over all directions:")
    lines = ["", rule, ""]
    lines += [f"- `{m}`: degenerate, {why}" for m, why in flags.get("systems", {}).items()]
    lines += [f"- `{m}` vs `{summary['baseline']}`: no verdict, {why}" for m, why in flags.get("pairs", {}).items()]
    return lines


def group_table(summary: dict[str, Any], metric: str) -> list[str]:
    """en-xx / xx-en averages per language group (OPUS-100 low / medium / high, CLM Table 8)."""
    groups = sorted(set(summary["groups"]["languages"].values()))
    if not groups:
        return []
    head = ["method"] + [f"{d} {g}" for d in ("en-xx", "xx-en") for g in groups]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for method in summary["methods"]:
        cells = summary["scores"][method][metric]["groups"]
        rows.append("| " + " | ".join([method] + [_fmt(cells[d].get(g)) for d in ("en-xx", "xx-en")
                                                  for g in groups]) + " |")
    return rows


def length_note(summary: dict[str, Any]) -> list[str]:
    """A warning per system with hypotheses at the length limit (probably cut); none: no lines."""
    cut = {m: r for m, r in summary.get("length_limit", {}).items() if r["at_limit"]}
    if not cut:
        return []
    return ["", "Warning: hypotheses stopped at the decoding length limit (decode.max_len_a, max_len_b), probably "
            "cut:", "", *(f"- `{m}`: {r['at_limit']} in {', '.join(r['directions'])}" for m, r in cut.items())]


def comparison_table(summary: dict[str, Any]) -> list[str]:
    """``evaluate.comparisons``: per comparison and metric, the directions where the system is significantly
    better / worse than its reference, neither, or untested (degenerate output); a comparison not run says why."""
    comps = summary.get("comparisons") or {}
    if not comps:
        return []
    lines = ["", "### Comparisons (paired bootstrap, evaluate.comparisons)", "",
             "| comparison | metric | better | worse | not significant | n/a |", "|---|---|---|---|---|---|"]
    skipped = []
    for key, c in comps.items():
        if "not_run" in c:
            skipped.append(f"- {key}: not run ({c['not_run']})")
            continue
        for metric, t in c["tests"].items():
            o = t["outcomes"]
            lines.append(f"| {key} | {metric} | {o['better']} | {o['worse']} | {o['not_significant']} | "
                         f"{o['degenerate']} |")
    return lines + ([""] + skipped if skipped else [])


def test_set_section(summary: dict[str, Any]) -> list[str]:
    """The tables of one test set: per metric, averages with win ratio and significance, and group averages."""
    label = summary.get("label")
    lines = ["", f"## Test set `{summary.get('test_set', 'test')}`" + (f": {label}" if label else ""), "",
             f"Sentences per direction: {', '.join(sorted({str(n) for n in summary['sentences'].values()}))}."]
    lines += degenerate_note(summary) + length_note(summary)
    for metric in summary["metrics"]:
        if metric not in summary["signatures"]:
            continue
        lines += ["", f"### {metric}", "", f"Signature: `{' ; '.join(summary['signatures'][metric])}`", ""]
        lines += metric_table(summary, metric)
        grouped = group_table(summary, metric)
        if grouped:
            lines += ["", f"Groups ({summary['groups']['source']}):", "", *grouped]
    return lines + comparison_table(summary)


def markdown(summary: dict[str, Any]) -> str:
    lines = [f"# Evaluation of experiment `{summary['experiment']}`", "", f"Baseline: `{summary['baseline']}`."]
    lines += test_set_section(summary)
    for other in summary.get("test_sets", {}).values():
        lines += test_set_section(other)
    off = summary.get("offtarget", {})
    if off.get("methods"):
        lines += ["", f"## Off-target rate (%), {off['scope']} directions of `{summary.get('test_set', 'test')}`", ""]
        lines += [f"{off['note']}.", ""] if off["note"] else []
        lines += ["| method | rate | LID error on the references |", "|---|---|---|"]
        lines += [f"| {m} | {_fmt(r['overall']['rate'])} | {_fmt(r['overall']['reference_rate'])} |"
                  for m, r in off["methods"].items()]
    for method, sets in summary.get("similarity", {}).items():
        for corpus, r in sets.items():
            lines.append(f"\nSimilarity search top-1 (%), {method} on {corpus}: "
                         f"English-centric {_fmt(r['english_centric'], 1)}, zero-shot {_fmt(r['zero_shot'], 1)}, "
                         f"all {_fmt(r['all'], 1)}")
    return "\n".join(lines) + "\n"
