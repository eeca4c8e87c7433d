"""Temperature sampling: the maths, the counts and the streaming selection."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from lsnmt.data.config import PerSourceSampling
from lsnmt.data.sample import apportion, multiplicities, per_source_sizes, temperature_probs

SIZES = {"en-de": 160_000, "en-fr": 40_000, "en-sw": 400, "en-vi": 9_600}


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.0, 5.0, 100.0])
def test_probabilities_sum_to_one(temperature: float) -> None:
    assert sum(temperature_probs(SIZES, temperature).values()) == pytest.approx(1.0, abs=1e-12)


def test_proportional_at_t1() -> None:
    probs = temperature_probs(SIZES, 1.0)
    total = sum(SIZES.values())
    for k, n in SIZES.items():
        assert probs[k] == pytest.approx(n / total, rel=1e-12)


def test_square_root_at_t2() -> None:
    probs = temperature_probs(SIZES, 2.0)
    z = sum(n ** 0.5 for n in SIZES.values())
    assert probs["en-sw"] == pytest.approx(400 ** 0.5 / z, rel=1e-12)


def test_uniform_as_temperature_grows() -> None:
    spread = [max(p.values()) - min(p.values()) for p in (temperature_probs(SIZES, t) for t in (1, 5, 50, 1e6))]
    assert spread == sorted(spread, reverse=True)
    assert spread[-1] < 1e-4


def test_huge_sizes_do_not_overflow() -> None:
    probs = temperature_probs({"a": 10**300, "b": 10**300}, 0.01)
    assert probs == {"a": 0.5, "b": 0.5}


def test_empty_sizes_raise() -> None:
    with pytest.raises(ValueError, match="at least one non-empty direction"):
        temperature_probs({"a": 0}, 2.0)


@pytest.mark.parametrize("total", [0, 1, 7, 1000, 209_999])
def test_apportion_adds_up(total: int) -> None:
    counts = apportion(total, temperature_probs(SIZES, 5.0))
    assert sum(counts.values()) == total
    exact = {k: total * p for k, p in temperature_probs(SIZES, 5.0).items()}
    assert all(abs(counts[k] - exact[k]) < 1 for k in counts)


@pytest.mark.parametrize(("n", "m"), [(10, 3), (10, 10), (10, 25), (1, 5), (1000, 999), (7, 0)])
def test_multiplicities_exact(n: int, m: int) -> None:
    mult = list(multiplicities(n, m, random.Random(0)))
    assert len(mult) == n
    assert sum(mult) == m
    assert set(mult) <= {m // n, m // n + 1}


def test_multiplicities_uniform() -> None:
    """Each line is chosen with probability r/n (Algorithm S is unbiased)."""
    rng, hits = random.Random(1), [0] * 10
    for _ in range(20_000):
        for i, k in enumerate(multiplicities(10, 3, rng)):
            hits[i] += k
    assert all(abs(h / 20_000 - 0.3) < 0.02 for h in hits)


def test_multiplicities_seeded() -> None:
    a = list(multiplicities(100, 37, random.Random("s")))
    assert a == list(multiplicities(100, 37, random.Random("s")))
    assert a != list(multiplicities(100, 37, random.Random("t")))


def test_per_source_downsampling_and_cap() -> None:
    cfg = PerSourceSampling(downsample=("ccmatrix",), temperature=5.0, max_factor=10.0)
    sizes = {"wmt": 100_000, "ccmatrix": 1_000_000}
    out = per_source_sizes(sizes, cfg)
    assert out["wmt"] == 100_000
    p = temperature_probs(sizes, 5.0)["ccmatrix"]
    assert out["ccmatrix"] == round(p / (1 - p) * 100_000)  # ccmatrix's share is now its temperature share
    capped = per_source_sizes({"wmt": 10, "ccmatrix": 1_000_000}, cfg)
    assert capped["ccmatrix"] == 100_000  # never below 1/max_factor
    assert per_source_sizes({"ccmatrix": 50}, cfg) == {"ccmatrix": 50}


@pytest.mark.parametrize(("n", "m"), [(10, 3), (10, 10), (10, 25), (7, 0)])
def test_epoch_lines_counts(n: int, m: int) -> None:
    """Each epoch draws m lines: every line q = m // n times, r = m mod n distinct lines once more."""
    from lsnmt.data.sample import epoch_lines

    lines = epoch_lines(n, m, seed=1, epoch=0, key="en-de/opus")
    counts = np.bincount(lines, minlength=n)
    assert len(lines) == m and counts.min() >= m // n and counts.max() <= m // n + (m % n > 0)
    assert int((counts > m // n).sum()) == m % n


def test_two_epochs_of_the_sample_stage_differ_and_are_reproducible(tmp_path: Path) -> None:
    """redraw: epoch (fairseq re-draws temperature-sampled data every epoch): the stage writes every line once, and
    the draws of epochs 0 and 1 differ, are the same on every call, and together reach lines one epoch misses."""
    from lsnmt.data.sample import epoch_draw, sample
    from lsnmt.experiment.params import Experiment
    from lsnmt.typed import build

    prepared = tmp_path / "prepared"
    for direction, n in {"en-de": 400, "en-sw": 20}.items():
        d = prepared / "train" / direction
        d.mkdir(parents=True)
        (d / "corpus.src").write_text("".join(f"{direction} src {i}\n" for i in range(n)))
        (d / "corpus.tgt").write_text("".join(f"{direction} tgt {i}\n" for i in range(n)))
    exp = build(Experiment, {"data": {"languages": ["en", "de", "sw"], "sources": [],
                                      "train_directions": "en-xx"},
                             "sample": {"temperature": 5.0, "seed": 3}}, "")
    sample(exp, prepared, tmp_path / "sampled")
    assert len((tmp_path / "sampled/train/en-de.src").read_text().splitlines()) == 400  # every line, once
    plan = json.loads((tmp_path / "sampled/sampling.json").read_text())
    m = plan["directions"]["en-de"]["m"]
    assert plan["redraw"] == "epoch" and m < 400  # T = 5: en-de is down-sampled
    e0, e1 = (epoch_draw(plan, "en-de", e) for e in (0, 1))
    assert len(e0) == len(e1) == m and not np.array_equal(e0, e1)
    assert np.array_equal(e0, epoch_draw(plan, "en-de", 0))  # deterministic
    assert len(np.union1d(e0, e1)) > len(np.unique(e0))  # the second epoch sees lines the first did not
    assert len(epoch_draw(plan, "en-sw", 0)) == plan["directions"]["en-sw"]["m"] > 20  # up-sampled


def test_the_trainer_pool_draws_each_epoch_anew(tmp_path: Path) -> None:
    """The batching pool reads the plan: epoch e's sentences are epoch_draw's, with repeats when up-sampled."""
    from lsnmt.data.corpus import Vocab, load_split
    from lsnmt.train.batching import Pool
    from tests.train.helpers import make_bin, tiny_experiment

    root = make_bin(tmp_path / "bin", {"en-de": 50, "de-en": 10}, max_len=8)
    exp = tiny_experiment()
    corpora = {d: {"corpus": {"n": n, "m": m, "offset": 0}} for d, n, m in (("en-de", 50, 30), ("de-en", 10, 25))}
    plan = {"redraw": "epoch", "seed": 1, "directions": {d: {"n": c["corpus"]["n"], "corpora": c}
                                                         for d, c in corpora.items()}}
    pool = Pool.build(load_split(root, "train", (("en", "de"), ("de", "en")), Vocab.load(root)), exp.train, plan)
    e0, e1 = pool.epoch_ids(0), pool.epoch_ids(1)
    assert len(e0) == 55 and not np.array_equal(e0, e1)
    assert np.bincount(e0, minlength=60)[50:].min() >= 2  # de-en, 10 lines drawn 25 times
