"""Degenerate output: where a significance verdict or a win ratio would claim what the scores cannot carry.

A model trained for a few updates (the embedded default run) emits next to nothing, and the paired bootstrap
still calls one such system "significantly better" than another (0.09 vs 0.00 BLEU: a handful of matched
unigrams on 16 sentences). With ``r = evaluate.degenerate_length_ratio`` (0.3) and ``s =
evaluate.degenerate_score`` (1.0 BLEU):

* length ratio of a system on a direction: non-space characters of its hypotheses over those of the
  references (tokenizer-free, so the same for every script); pooled over all directions for the system;
* a system is *degenerate* when its pooled length ratio is below ``r`` or its average BLEU below ``s``
  (BLEU: the first ``bleu`` / ``spbleu-*`` metric of ``evaluate.metrics``; without one, the ratio alone);
* two systems have *no verdict* on a direction (no "significantly better / worse", whatever the metric) when
  either one's length ratio there is below ``r`` or both score below ``s`` BLEU there; and none on any
  direction, nor a win ratio, when the same holds of their pooled ratios and averages.

Nothing is dropped: scores and averages are reported as they are, with the reason beside them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from lsnmt.eval.config import EvaluateConfig

BLEU_METRICS = ("bleu", "spbleu-flores101", "spbleu-flores200")


def characters(lines: Sequence[str]) -> int:
    """Non-space characters of ``lines``."""
    return sum(len("".join(x.split())) for x in lines)


def length(hyps: Sequence[str], refs: Sequence[str]) -> dict[str, Any]:
    """``{hyp_chars, ref_chars, ratio}`` of one direction (ratio 1 for empty references)."""
    h, r = characters(hyps), characters(refs)
    return {"hyp_chars": h, "ref_chars": r, "ratio": h / r if r else 1.0}


def bleu_metric(metrics: Sequence[str]) -> str | None:
    """The metric the score floor applies to: the first BLEU / spBLEU one, else ``None``."""
    return next((m for m in metrics if m in BLEU_METRICS), None)


@dataclass(frozen=True, kw_only=True)
class Output:
    """What decides whether one system's output (on one direction, or pooled) is degenerate."""

    name: str
    ratio: float
    """Non-space characters of the hypotheses over the references'."""
    bleu: float | None
    """Its BLEU (``None``: the experiment has no BLEU metric)."""


def alone(out: Output, cfg: EvaluateConfig) -> str | None:
    """Why ``out`` is degenerate on its own, or ``None``."""
    if out.ratio < cfg.degenerate_length_ratio:
        return f"length ratio {out.ratio:.2f} < {cfg.degenerate_length_ratio}"
    if out.bleu is not None and out.bleu < cfg.degenerate_score:
        return f"BLEU {out.bleu:.2f} < {cfg.degenerate_score}"
    return None


def pair(a: Output, b: Output, cfg: EvaluateConfig) -> str | None:
    """Why ``a`` and ``b`` get no verdict against each other, or ``None`` (module docstring)."""
    for out in (a, b):
        if out.ratio < cfg.degenerate_length_ratio:
            return f"{out.name}: length ratio {out.ratio:.2f} < {cfg.degenerate_length_ratio}"
    if a.bleu is not None and b.bleu is not None and max(a.bleu, b.bleu) < cfg.degenerate_score:
        return f"both below {cfg.degenerate_score} BLEU ({a.name} {a.bleu:.2f}, {b.name} {b.bleu:.2f})"
    return None


def direction_output(name: str, record: Mapping[str, Any], metric: str | None) -> Output:
    """:class:`Output` of one ``{system}/{direction}.json`` record."""
    return Output(name=name, ratio=record["length"]["ratio"],
                  bleu=record["scores"][metric]["score"] if metric else None)


def pooled_output(name: str, records: Mapping[Any, Mapping[str, Any]], metric: str | None) -> Output:
    """:class:`Output` of a system over all its directions: pooled length ratio, average BLEU."""
    hyp = sum(r["length"]["hyp_chars"] for r in records.values())
    ref = sum(r["length"]["ref_chars"] for r in records.values())
    bleu = sum(r["scores"][metric]["score"] for r in records.values()) / len(records) if metric else None
    return Output(name=name, ratio=hyp / ref if ref else 1.0, bleu=bleu)


def flags(cfg: EvaluateConfig, records: Mapping[str, Mapping[Any, Mapping[str, Any]]],
          baseline: str | None) -> dict[str, Any]:
    """``summary.json``'s ``degenerate``: the thresholds, each system's pooled length ratio, the degenerate
    systems (``systems``: name -> reason) and the systems without any verdict against the baseline (``pairs``)."""
    metric = bleu_metric(cfg.metrics)
    pooled = {m: pooled_output(m, recs, metric) for m, recs in records.items()}
    out: dict[str, Any] = {"length_ratio": cfg.degenerate_length_ratio, "score": cfg.degenerate_score,
                           "score_metric": metric, "ratios": {m: o.ratio for m, o in pooled.items()},
                           "systems": {}, "pairs": {}}
    for m, o in pooled.items():
        if (why := alone(o, cfg)) is not None:
            out["systems"][m] = why
        if baseline is not None and m != baseline and (why := pair(o, pooled[baseline], cfg)) is not None:
            out["pairs"][m] = why
    return out
