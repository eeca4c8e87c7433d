"""The papers' claims that the claim stage tests, each with its source and the parameter count that makes it the
paper's comparison (``lsnmt.claim``); one extension of ours (LMS against a dense model of its size, which LMS-FD never
runs) is labelled as such (``origin``).

A claim compares a system (the first of its kind in ``claim.methods``, through the route it names) with a
baseline: ``naive``, the base Transformer alone, or a *dense* naive model of another width (``claim.dense``), the
one whose total parameters come closest to the system's. Its parameter condition is checked on the counted
parameters of both (:func:`lsnmt.claim.measure.param_counts`):

* ``shared``: the system's parameters that every direction uses equal naive's total (LMS: the base model is
  shared, the factors are language-specific);
* ``inference``: the parameters one direction uses at test time, for the costliest direction, equal naive's
  total (FD-Share discards its experts; an LSL layer runs one language's copy: LSL's |θeff|);
* ``total``: a dense naive model within ``claim.dense_tolerance`` of the system's total parameters.

A claim is *shown* when :func:`lsnmt.claim.stats.better` holds (the 95 % interval of the BLEU difference over
seeds and sentences above 0, better on every seed), *not shown* otherwise (the numbers say by how much), and *not
measured* when its system or a baseline that meets the condition is missing (the reason says which).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lsnmt.claim import stats
from lsnmt.methods import NAIVE

Count = Literal["shared", "inference", "total"]
Origin = Literal["paper", "ours"]


@dataclass(frozen=True)
class Claim:
    text: str
    source: str
    """Where the paper makes it: section, table, the paper's rows and numbers (LMS-FD: v1, arXiv 2305.14220v1; its
    Tables 1-2 are the same in v2). An extension of ours says so first ("Ours, ...")."""
    kind: str
    route: str | None
    """FD and LMS+FD: the inference route of the tested system; ``None``: the method's only one."""
    count: Count
    """Which of the system's counts must match the baseline's total (module docstring)."""
    origin: Origin = "paper"
    """``paper``: the comparison a paper makes (its table's rows); ``ours``: an extension no paper makes."""


CLAIMS = (
    Claim(
        text="LMS > naive at equal shared capacity",
        source="LMS-FD Sec. 5.2, Table 2 (IWSLT'14): LMS +1.05 BLEU over naive MMT, 58M against 48M parameters; the "
        "base model is shared by every direction, the LS factors are not",
        kind="lms",
        route=None,
        count="shared",
    ),
    Claim(
        text="LMS > a naive of LMS's total size",
        source="Ours, not a paper's claim: LMS-FD compares LMS only with LS and MoE baselines of its size or larger "
        "(Sec. 1: 'outperforms previous LS methods or MoE with fewer than or the same number of parameters'; "
        "Table 2: CLSR* 105M, Switch 149M against LMS's 58M), never with a dense model of LMS's size; the dense "
        "control is LSL Sec. 4.3's",
        kind="lms",
        route=None,
        count="total",
        origin="ours",
    ),
    Claim(
        text="FD-Share > naive at naive's size",
        source="LMS-FD Sec. 3.3, Table 1 (IWSLT'14): FD through the shared route +1.17 BLEU over naive MMT with "
        "naive's 48M inference parameters (161M in training)",
        kind="fd",
        route="share",
        count="inference",
    ),
    Claim(
        text="LSL > naive at equal inference cost",
        source="LSL Sec. 4.4, Table 5 (one shared decoder, as here): LSL-NAS-SD 46.3 vs the Shared Decoder Baseline "
        "44.7 chrF, both 186M |θeff| (Table 1's baseline has a decoder per target language: 299M |θ|)",
        kind="lsl",
        route=None,
        count="inference",
    ),
    Claim(
        text="LSL > a naive of LSL's total size",
        source="LSL Sec. 4.3, Table 1: the baseline at hidden 704 (453M |θ|, 1.03 x LSL-NAS's 441M) 46.2 vs LSL-NAS "
        "46.4 chrF, LSL-NAS without dense pre-training as here; the 768-wide (509M) reaches 46.5, below only LSL-NAS "
        "with dense pre-training (46.8)",
        kind="lsl",
        route=None,
        count="total",
    ),
)


def find(systems: Mapping[str, Mapping[str, Any]], kind: str, route: str | None) -> str | None:
    """The first system of ``kind`` (through ``route``), or ``None``."""
    return next((n for n, s in systems.items() if s["kind"] == kind and (route is None or s["route"] == route)), None)


def closest_dense(systems: Mapping[str, Mapping[str, Any]], total: int) -> str | None:
    """The dense naive system whose total parameters are closest to ``total`` (in ratio)."""
    dense = [n for n, s in systems.items() if s.get("dense")]
    return min(dense, key=lambda n: abs(systems[n]["params"]["total"] / total - 1), default=None)


def baseline(
    claim: Claim, systems: Mapping[str, Mapping[str, Any]], system: str, tolerance: float
) -> tuple[str | None, str]:
    """``(baseline, what the counts say)``; the baseline is ``None`` when none meets the claim's condition."""
    mine, naive = systems[system]["params"], systems[NAIVE]["params"]["total"]
    if claim.count != "total":
        what = "shared" if claim.count == "shared" else "per direction"
        text = f"{system} {what} {mine[claim.count]:,} vs naive {naive:,}"
        return (NAIVE, text) if mine[claim.count] == naive else (None, f"{text}: not equal")
    dense = closest_dense(systems, mine["total"])
    if dense is None:
        return None, "no dense naive in claim.dense"
    ratio = systems[dense]["params"]["total"] / mine["total"]
    text = f"{dense} {systems[dense]['params']['total']:,} = {ratio:.2f} x {system}'s {mine['total']:,}"
    return (dense, text) if abs(ratio - 1) <= tolerance else (None, f"{text}: beyond ±{tolerance:.0%}")


def verdict(
    claim: Claim,
    systems: Mapping[str, Mapping[str, Any]],
    compare: Callable[[str, str], dict[str, Any]],
    tolerance: float,
) -> dict[str, Any]:
    """``{claim, source, origin, system, baseline, parameters, status, because}`` (module docstring)."""
    out: dict[str, Any] = {
        "claim": claim.text,
        "source": claim.source,
        "origin": claim.origin,
        "system": None,
        "baseline": None,
        "parameters": "",
    }
    system = find(systems, claim.kind, claim.route)
    if system is None:
        route = f" (route {claim.route})" if claim.route else ""
        return {**out, "status": "not measured", "because": f"no method of kind {claim.kind}{route} in claim.methods"}
    base, parameters = baseline(claim, systems, system, tolerance)
    out |= {"system": system, "baseline": base, "parameters": parameters}
    if base is None:
        return {**out, "status": "not measured", "because": parameters}
    ok, because = stats.better(compare(system, base))
    return {**out, "status": "shown" if ok else "not shown", "because": because}
