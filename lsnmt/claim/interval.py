"""The claim's 95 % intervals and p-values for its crossed design: seeds x test sentences (``lsnmt.claim``).

Every seed's system translates the same test sentences, so a score (or a difference of two systems' scores) is an
average over a crossed design, R seeds by C sentences (Owen 2007, "The pigeonhole bootstrap", Ann. Appl. Stat.
1(2); a sentence counts with its outputs in every direction, :mod:`lsnmt.claim.bootstrap`). For the mean of
``x_si = mu + a_s + b_i + e_si`` (seed effects of variance ``s_A^2``, sentence effects ``s_B^2``, interaction
``s_E^2``, all independent)::

    Var = s_A^2 / R + s_B^2 / C + s_E^2 / (R C)

Owen's pigeonhole bootstrap, which resamples the seeds and the sentences independently (this stage's former
interval), has the expectation ``(1 - 1/R) s_A^2 / R + (1 - 1/C) s_B^2 / C + ~3 s_E^2 / (R C)`` (our derivation
for the mean): mildly conservative with many seeds, but with R = 2 it halves the seed term, and its percentiles
come from three seed draws (both seeds, one or the other twice). Here each term is estimated by what suits it::

    V_seeds = s^2 / R          s^2: unbiased variance of the R per-seed scores      E = s_A^2/R + s_E^2/(R C)
    V_sent  = var of B pooled scores over sentence resamples (every seed kept)       E ~ s_B^2/C + s_E^2/(R C)
    V = V_seeds + V_sent       conservative by s_E^2 / (R C) (at most sqrt 2 wider, when only e varies)
    interval = estimate -/+ t_{0.975, R-1} sqrt(V)       p = P(|T_{R-1}| >= |estimate| / sqrt(V)), two-sided

Student's t on R - 1 degrees of freedom is exact (normal effects) when the seeds' spread dominates, as it does in
the claim, and conservative when the sentences' does; Welch-Satterthwaite degrees of freedom, estimated from the
same few seeds, undercovered (0.90 at R = 2 with seeds dominating, in the test's simulation). Two seeds give
t = 12.7, five t = 2.78. With one seed there is no seed term: the interval covers sentence noise alone, given that
one training run (t on C - 1). A corpus score (BLEU) is not a mean of sentences: the per-seed corpus scores and the
resampled pooled scores stand in for the means, as the sentence bootstrap of corpus BLEU does (Koehn 2004).
``tests/claim/test_interval.py`` measures the coverage on simulated seeds and sentences with a known difference.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import stats as sps

LEVEL = 0.95


@dataclass(frozen=True)
class Interval:
    """``estimate -/+ t sqrt(V)`` with its parts (module docstring)."""

    lo: float
    hi: float
    se: float
    """``sqrt(V)``."""
    se_seeds: float
    """``sqrt(V_seeds)``: the spread of the seeds."""
    se_sentences: float
    """``sqrt(V_sent)``: the spread over test sentences."""
    df: float
    """Degrees of freedom of ``t``: R - 1, or C - 1 with one seed."""
    p: float
    """Two-sided p of ``estimate = 0``."""

    @property
    def ci(self) -> list[float]:
        return [self.lo, self.hi]

    def record(self) -> dict[str, Any]:
        """The parts as ``summary.json`` keeps them (``ci`` apart)."""
        return {k: v for k, v in asdict(self).items() if k not in ("lo", "hi")}


def crossed(
    estimate: float, per_seed: Sequence[float], resampled: np.ndarray, sentences: int, level: float = LEVEL
) -> Interval:
    """The interval of ``estimate`` (the pooled score or difference) from the ``R`` per-seed values and ``B``
    pooled values over sentence resamples (every seed kept) of ``sentences`` sentences."""
    r = len(per_seed)
    v_seeds = float(np.var(per_seed, ddof=1)) / r if r > 1 else 0.0
    v_sent = float(np.var(resampled, ddof=1))
    v = v_seeds + v_sent
    df = float(r - 1 if r > 1 else max(sentences - 1, 1))
    if v <= 0:  # every seed and every resample alike
        return Interval(estimate, estimate, 0.0, 0.0, 0.0, df, 1.0 if estimate == 0 else 0.0)
    se = math.sqrt(v)
    half = float(sps.t.ppf(0.5 + level / 2, df)) * se
    p = float(2 * sps.t.sf(abs(estimate) / se, df))
    return Interval(float(estimate - half), float(estimate + half), se, math.sqrt(v_seeds), math.sqrt(v_sent), df, p)
