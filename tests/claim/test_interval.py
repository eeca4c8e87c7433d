"""The claim's interval over seeds and sentences (lsnmt.claim.interval) on a known answer: simulated seeds and test
sentences with a known difference, ``x_sdi = delta + a_s + b_i + e_sdi`` (seed, sentence and interaction effects,
a sentence's effect shared by its directions), scored as the stage scores exact match. Its 95 % interval covers
``delta`` about 95 % of the time when the seeds' spread dominates (the claim's case) and at least that when the
sentences' does; the pigeonhole bootstrap it replaced covers 60 % with two seeds."""

from __future__ import annotations

import numpy as np
import pytest

from lsnmt.claim import bootstrap, interval, stats

DELTA = 0.3


def _items(rng: np.random.Generator, d: bootstrap.Design, sd: tuple[float, float, float]) -> np.ndarray:
    """The pooled items (seeds, directions, sentences) of one simulated comparison."""
    a = rng.normal(0, sd[0], d.seeds)[:, None, None]
    b = rng.normal(0, sd[1], d.sentences)[None, None, :]
    e = rng.normal(0, sd[2], (d.seeds, d.directions, d.sentences))
    return (DELTA + a + b + e).reshape(-1)


def _reported(x: np.ndarray, d: bootstrap.Design, samples: int, seed: int) -> interval.Interval:
    """The stage's exact-match interval from the items (stats.system_summary and stats.compare: per-seed scores,
    sentence resamples, interval.crossed)."""
    w = bootstrap.weights(d, samples, seed, over_seeds=False)
    per_seed = 100 * x.reshape(d.seeds, -1).mean(1)
    return interval.crossed(100 * x.mean(), per_seed, bootstrap.exact(x, w), d.sentences)


def _coverage(seeds: int, sd: tuple[float, float, float], runs: int) -> tuple[float, float, float]:
    """Share of ``runs`` simulations whose reported interval, and whose pigeonhole percentile interval (seeds and
    sentences resampled), hold ``100 delta``; and the reported width over the true ``2 x 1.96`` standard errors."""
    d = bootstrap.Design(seeds=seeds, directions=2, sentences=50)
    rng = np.random.default_rng(seeds)
    true_se = 100 * np.sqrt(sd[0] ** 2 / d.seeds + sd[1] ** 2 / d.sentences + sd[2] ** 2 / d.items)
    ours, pigeonhole, width = 0, 0, 0.0
    for k in range(runs):
        x = _items(rng, d, sd)
        iv = _reported(x, d, 100, k)
        ours += iv.lo <= 100 * DELTA <= iv.hi
        width += (iv.hi - iv.lo) / (2 * 1.96 * true_se) / runs
        lo, hi = bootstrap.interval(bootstrap.exact(x, bootstrap.weights(d, 100, k)))
        pigeonhole += lo <= 100 * DELTA <= hi
    return ours / runs, pigeonhole / runs, width


SEEDS_DOMINATE, SENTENCES_DOMINATE = (1.0, 0.5, 1.0), (0.05, 1.0, 1.0)


@pytest.mark.parametrize(
    ("seeds", "sd", "low", "high"),
    [(5, SEEDS_DOMINATE, 0.92, 0.985), (5, SENTENCES_DOMINATE, 0.95, 1.0), (2, SEEDS_DOMINATE, 0.95, 1.0)],
)
def test_the_interval_covers_the_known_difference(
    seeds: int, sd: tuple[float, float, float], low: float, high: float
) -> None:
    """300 simulations each (the coverage's standard error about 1.3 points)."""
    ours, _, width = _coverage(seeds, sd, 300)
    assert low <= ours <= high, ours
    assert width < (1.6 if seeds == 5 else 8.0), width  # t on R - 1 = 4: 2.78 / 1.96 = 1.42 where seeds dominate


def test_the_pigeonhole_bootstrap_undercovers_with_two_seeds() -> None:
    """The stage's former interval: its seed term is halved and has three outcomes (module docstring)."""
    _, pigeonhole, _ = _coverage(2, SEEDS_DOMINATE, 300)
    assert pigeonhole < 0.75, pigeonhole


@pytest.mark.slow
def test_the_coverage_at_five_seeds_is_95_percent() -> None:
    """2,000 simulations (standard error 0.5 points): the figures docs/claim.md gives."""
    ours, pigeonhole, _ = _coverage(5, SEEDS_DOMINATE, 2000)
    assert 0.94 <= ours <= 0.975 and pigeonhole < 0.9, (ours, pigeonhole)  # measured: 0.960 and 0.843


def test_the_stage_reports_this_interval() -> None:
    """stats.compare's exact-match difference is the interval of the items' differences (same resamples)."""
    rng = np.random.default_rng(3)
    refs = {f"en-x{k}": ["1 2 3 4 5"] * 20 for k in range(2)}
    right = {s: rng.random((2, 20)) < q for s, q in ((1, 0.7), (2, 0.4), (3, 0.6))}
    wrong = {s: rng.random((2, 20)) < 0.5 for s in right}

    def runs(ok: dict[int, np.ndarray]) -> dict[int, dict[str, list[str]]]:
        return {s: {f"en-x{k}": ["1 2 3 4 5" if v else "9" for v in m[k]] for k in range(2)} for s, m in ok.items()}

    c = stats.compare(runs(right), runs(wrong), refs, [1, 2, 3], samples=200, seed=4, alpha=0.05, names=("m", "b"))
    x = np.concatenate([right[s].reshape(-1).astype(float) - wrong[s].reshape(-1) for s in (1, 2, 3)])
    iv = _reported(x, bootstrap.Design(3, 2, 20), 200, 4)
    assert c["exact"]["ci"] == pytest.approx(iv.ci) and c["exact"]["p"] == pytest.approx(iv.p)
    assert c["exact"]["df"] == 2 and c["exact"]["se_seeds"] > 0 and c["exact"]["se_sentences"] > 0


def test_one_seed_has_no_seed_term_and_equal_outputs_no_spread() -> None:
    iv = interval.crossed(4.0, [4.0], np.array([3.0, 5.0, 4.0]), sentences=10)
    assert iv.se_seeds == 0 and iv.df == 9 and iv.lo < 4.0 < iv.hi
    same = interval.crossed(0.0, [0.0, 0.0], np.zeros(5), sentences=10)
    assert same.ci == [0.0, 0.0] and same.p == 1.0
