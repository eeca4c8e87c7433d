"""The papers' claims that the claim stage tests, each with its source and the parameter count that makes it the
paper's comparison (``lsnmt.claim``).

A claim compares a system (the first of its kind in ``claim.methods``, through the route it names) with a
baseline: ``naive``, the base Transformer alone, or a *dense* naive model of another width (``claim.dense``), the
one whose total parameters come closest to the system's. Its parameter condition is checked on the counted
parameters of both (:func:`lsnmt.claim.measure.param_counts`):

* ``shared``: the system's parameters that every direction uses equal naive's total (LMS: the base model is
  shared, the factors are language-specific);
* ``inference``: the parameters one direction uses at test time, for the costliest direction, equal naive's
  total (FD-Share discards its experts; an LSL layer runs one language's copy: LSL's |θeff|);
* ``total``: a dense naive model within ``claim.dense_tolerance`` of the system's total parameters.

A claim is *shown* when :func:`lsnmt.claim.stats.better` holds (the seed-aware 95 % interval of the BLEU
difference above 0, better on every seed), *not shown* otherwise (the numbers say by how much), and *not measured*
when its system or a baseline that meets the condition is missing (the reason says which).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from lsnmt.claim import stats
from lsnmt.methods import NAIVE

Count = Literal["shared", "inference", "total"]


@dataclass(frozen=True)
class Claim:
    text: str
    source: str
    """Where the paper makes it (section, table, the paper's numbers)."""
    kind: str
    route: str | None
    """FD and LMS+FD: the inference route of the tested system; ``None``: the method's only one."""
    count: Count
    """Which of the system's counts must match the baseline's total (module docstring)."""


CLAIMS = (
    Claim(
        text="LMS > naive at equal shared capacity",
        source="LMS-FD Sec. 2, Table 2: LMS +1.05 BLEU over naive MMT on IWSLT'14; the base model (48M) is shared, "
        "the LS factors (+10M) are not",
        kind="lms",
        route=None,
        count="shared",
    ),
    Claim(
        text="LMS > a naive of LMS's total size",
        source="LMS-FD Sec. 1 and Table 2: LMS (58M) beats models with 2-3 times its parameters (CLSR* 105M, "
        "Switch 149M), so its gain is not the parameter count; the dense control is LSL Sec. 4.3's",
        kind="lms",
        route=None,
        count="total",
    ),
    Claim(
        text="FD-Share > naive at naive's size",
        source="LMS-FD Sec. 3.3, Table 1: FD (shared route) +1.17 BLEU over naive MMT with naive's 48M inference "
        "parameters",
        kind="fd",
        route="share",
        count="inference",
    ),
    Claim(
        text="LSL > naive at equal inference cost",
        source="LSL Sec. 1 (contribution 1) and Sec. 4.3, Table 1: LSL-NAS +0.9 chrF over the baseline at the "
        "same |θeff| (186M per direction)",
        kind="lsl",
        route=None,
        count="inference",
    ),
    Claim(
        text="LSL > a naive of LSL's total size",
        source="LSL Sec. 4.3, Table 1: the widest baseline (hidden 768, 509M, 15% more than LSL-NAS's 441M) does "
        "not match LSL-NAS (46.5 vs 46.8 chrF)",
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
    """``{claim, source, system, baseline, parameters, status, because}`` (module docstring)."""
    out: dict[str, Any] = {
        "claim": claim.text,
        "source": claim.source,
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
