"""The claim's resampling and intervals (lsnmt.claim.bootstrap, lsnmt.claim.interval through lsnmt.claim.stats)
against cases with known answers: copies of a seed carry no new information, a seed's luck is not averaged away,
the outputs of one sentence in every direction count as one draw, and the sentence-level interval matches the
textbook standard error. Coverage on simulated seeds and sentences: tests/claim/test_interval.py."""

from __future__ import annotations

import numpy as np
import pytest

from lsnmt.claim import bootstrap, stats

RIGHT, WRONG = "1 2 3 4 5", "9 9"


def _refs(directions: int, sentences: int) -> dict[str, list[str]]:
    return {f"en-x{d}": [RIGHT] * sentences for d in range(directions)}


def _runs(correct: dict[int, np.ndarray], directions: int) -> dict[int, dict[str, list[str]]]:
    """Seed -> direction -> hypotheses; ``correct[seed][i]``: sentence i is right in every direction."""
    return {
        s: {f"en-x{d}": [RIGHT if ok else WRONG for ok in c] for d in range(directions)} for s, c in correct.items()
    }


def test_weights_resample_seeds_and_whole_sentences() -> None:
    design = bootstrap.Design(seeds=3, directions=4, sentences=10)
    w = bootstrap.weights(design, 50, seed=7)
    assert w.shape == (50, 120) and np.all(w.sum(axis=1) == 120)  # S seeds x N sentences drawn, D directions each
    cube = w.reshape(50, 3, 4, 10)
    assert np.all(cube == cube[:, :, :1, :])  # a sentence is drawn in every direction at once
    assert np.array_equal(w, bootstrap.weights(design, 50, seed=7))  # deterministic for a seed
    seeds_fixed = bootstrap.weights(design, 50, seed=7, over_seeds=False).reshape(50, 3, 4, 10)
    assert np.all(seeds_fixed == seeds_fixed[:, :1])  # every seed once: the same sentence draws for all
    one_seed = bootstrap.weights(bootstrap.Design(1, 4, 10), 50, seed=7, over_seeds=False)
    assert np.array_equal(seeds_fixed[:, 0].reshape(50, 40), one_seed)  # sentence draws do not depend on the seeds


def test_a_copied_seed_does_not_narrow_the_interval() -> None:
    """Two seeds with the same outputs are one seed's evidence: the same scores and no narrower an interval (one
    seed's covers sentence noise alone; two seeds' is Student's t on one degree of freedom: wider)."""
    correct = np.random.default_rng(0).random(60) < 0.6
    refs = _refs(2, 60)
    one = stats.system_summary(_runs({1: correct}, 2), refs, [1], 400, 3)
    two = stats.system_summary(_runs({1: correct, 2: correct}, 2), refs, [1, 2], 400, 3)
    assert two["exact"] == one["exact"] and two["exact_interval"]["se"] == pytest.approx(one["exact_interval"]["se"])
    assert two["exact_ci"][0] < one["exact_ci"][0] and two["exact_ci"][1] > one["exact_ci"][1]
    assert (one["exact_interval"]["df"], two["exact_interval"]["df"]) == (59, 1)


def test_the_spread_of_seeds_is_in_the_interval() -> None:
    """Seed 1 gets everything right, seed 2 nothing: no sentence varies, the seeds' spread is all there is, and two
    seeds cannot say where a third would fall (t on one degree of freedom: 12.7 standard errors of 50)."""
    refs = _refs(3, 40)
    runs = _runs({1: np.ones(40, bool), 2: np.zeros(40, bool)}, 3)
    s = stats.system_summary(runs, refs, [1, 2], 1000, 5)
    assert s["exact"] == 50.0 and s["exact_interval"]["se_sentences"] == 0
    assert s["exact_ci"] == pytest.approx([50 - 12.7062 * 50, 50 + 12.7062 * 50], rel=1e-4)


@pytest.mark.parametrize("directions", [1, 6])
def test_the_sentence_interval_matches_the_standard_error_of_its_sentences(directions: int) -> None:
    """One seed, N = 400 sentences right or wrong in every direction at once, a share q right: the bootstrap
    standard error of exact match is ``100 sqrt(q (1 - q) / N)`` whatever the number of directions (Efron &
    Tibshirani 1993, Sec. 6.2: the bootstrap SE of a mean), not ``/ sqrt(N D)`` as if directions were draws."""
    n, samples = 400, 4000
    correct = np.random.default_rng(1).random(n) < 0.3
    q = correct.mean()
    refs, runs = _refs(directions, n), _runs({1: correct}, directions)
    d = stats.design(refs, [1])
    w = bootstrap.weights(d, samples, seed=11, over_seeds=False)
    em = bootstrap.exact(stats.exact(stats.pool(runs, [1], list(refs)), stats.pool({1: refs}, [1], list(refs))), w)
    assert em.std() == pytest.approx(100 * np.sqrt(q * (1 - q) / n), rel=0.06)
    lo, hi = stats.system_summary(runs, refs, [1], samples, 11)["exact_ci"]
    assert hi - lo == pytest.approx(2 * 1.96 * 100 * np.sqrt(q * (1 - q) / n), rel=0.12)


def test_equal_systems_differ_by_nothing_and_show_nothing() -> None:
    refs = _refs(2, 30)
    runs = _runs({1: np.arange(30) % 2 == 0, 2: np.arange(30) % 3 == 0}, 2)
    c = stats.compare(runs, runs, refs, [1, 2], samples=200, seed=1, alpha=0.05, names=("m", "naive"))
    assert c["bleu"]["delta"] == 0 and c["bleu"]["ci"] == [0.0, 0.0] and c["bleu"]["p"] == 1.0
    assert not stats.better(c)[0] and c["interval"] == stats.INTERVAL


def test_one_lucky_seed_does_not_show_a_difference() -> None:
    """The system beats the baseline by 50 points on seed 1 and loses 24 on seed 2: the pooled difference is
    positive and the item bootstrap would call it significant; the interval over seeds reaches below 0."""
    refs = _refs(4, 50)
    good, bad = np.ones(50, bool), np.arange(50) % 2 == 0
    system = _runs({1: good, 2: bad & (np.arange(50) % 4 == 0)}, 4)
    base = _runs({1: bad, 2: bad}, 4)
    c = stats.compare(system, base, refs, [1, 2], samples=1000, seed=2, alpha=0.05, names=("m", "naive"))
    assert c["exact"]["delta"] == pytest.approx((50 - 24) / 2) and c["exact"]["ci"][0] < 0 < c["exact"]["ci"][1]
    assert c["bleu"]["delta"] > 0 and c["bleu"]["ci"][0] < 0 and c["seeds_better"] == 1
    ok, text = stats.better(c)
    assert not ok and "better on 1 of 2 seeds" in text


def test_directions_of_unequal_length_are_refused() -> None:
    with pytest.raises(ValueError, match="directions differ in test sentences"):
        stats.design({"en-de": ["1"] * 3, "de-en": ["1"] * 4}, [1])
