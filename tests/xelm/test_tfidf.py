"""Balanced TF-IDF clustering and the ensemble weights (x-elm Sec. 3.2-3.3)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import linprog

from lsnmt.io import iter_lines
from lsnmt.xelm import tfidf
from lsnmt.xelm.config import TfidfConfig
from tests.conftest import ROOT


def _lp_optimum(cost: np.ndarray) -> float:
    """Reference: the balanced assignment as a linear program (HiGHS), its optimal cost."""
    n, k = cost.shape
    cols = np.arange(n * k)
    docs = sparse.csr_matrix((np.ones(n * k), (np.repeat(np.arange(n), k), cols)), shape=(n, n * k))
    sizes = sparse.csr_matrix((np.ones(n * k), (np.tile(np.arange(k), n), cols)), shape=(k, n * k))
    bounds = np.concatenate([np.full(k, math.ceil(n / k)), np.full(k, -(n // k))])
    res = linprog(cost.ravel(), A_ub=sparse.vstack([sizes, -sizes]), b_ub=bounds, A_eq=docs, b_eq=np.ones(n),
                  bounds=(0, 1), method="highs-ds")
    assert res.status == 0
    return float(res.fun)


@pytest.mark.parametrize("n,k,skew", [(10, 3, 0.0), (101, 4, 2.0), (250, 2, 3.0), (64, 8, 1.0), (7, 7, 0.5)])
def test_balanced_assignment_is_balanced_and_optimal(n: int, k: int, skew: float) -> None:
    rng = np.random.default_rng(n * k)
    x = rng.normal(size=(n, 6))
    c = rng.normal(size=(k, 6)) + skew * rng.normal(size=6)  # skewed: most points prefer one centroid
    cost = tfidf.sq_distances(x, c)
    z = tfidf.balanced_assign(cost)
    sizes = np.bincount(z, minlength=k)
    assert sizes.min() >= n // k and sizes.max() <= math.ceil(n / k)
    assert cost[np.arange(n), z].sum() == pytest.approx(_lp_optimum(cost), rel=1e-9, abs=1e-9)


def test_tfidf_clusters_of_real_text_are_balanced() -> None:
    texts = []
    for pair, lang in (("eng-deu", "deu"), ("eng-fra", "fra"), ("eng-rus", "rus")):
        texts += list(iter_lines(ROOT / "embedded" / "tatoeba" / pair / f"test.{lang}"))[:150]
    cfg = TfidfConfig(max_features=5000, svd_dim=20, fit_docs=450, iterations=10, assign_chunk=1000)
    emb = tfidf.fit_embedder(cfg, texts)
    x = tfidf.embed(emb, texts)
    assert np.allclose(np.linalg.norm(x, axis=1)[np.linalg.norm(x, axis=1) > 0], 1.0)  # L2-normalised rows
    for k in (2, 3, 4):
        centroids, labels, _ = tfidf.balanced_kmeans(x, k, cfg.iterations, cfg.seed)
        sizes = np.bincount(labels, minlength=k)
        assert sizes.max() - sizes.min() <= 1
        assigned = tfidf.assign(x, centroids, "balanced", 100)  # chunks of 100: each chunk balanced
        assert np.bincount(assigned, minlength=k).max() - np.bincount(assigned, minlength=k).min() <= 450 // 100 + 1


def test_numbers_are_normalised() -> None:
    vec = tfidf.NumberNormalizingVectorizer().fit(["in 1999 and 2001 we met", "room 12"])
    assert sorted(vec.vocabulary_) == ["#NUMBER", "and", "in", "met", "room", "we"]


@pytest.mark.parametrize("temperature", [0.01, 0.1, 1.0, 10.0])
@pytest.mark.parametrize("top_m", [None, 1, 2, 3])
def test_ensemble_weights_sum_to_one(temperature: float, top_m: int | None) -> None:
    rng = np.random.default_rng(3)
    x, c = rng.normal(size=(20, 5)), rng.normal(size=(4, 5))
    w = tfidf.ensemble_weights(x, c, temperature, top_m)
    assert w.shape == (20, 4) and np.all(w >= 0)
    assert np.allclose(w.sum(1), 1.0)
    assert np.array_equal(w.argmax(1), tfidf.sq_distances(x, c).argmin(1))  # the closest centroid weighs most
    if top_m is not None:
        assert np.all((w > 0).sum(1) <= top_m)


def test_ensemble_weights_follow_the_formula() -> None:
    x, c = np.array([[0.0, 1.0]]), np.array([[0.0, 0.0], [1.0, 1.0], [0.0, 3.0]])
    d2 = np.array([1.0, 1.0, 4.0])
    expected = np.exp(-d2 / 0.5) / np.exp(-d2 / 0.5).sum()
    assert np.allclose(tfidf.ensemble_weights(x, c, 0.5)[0], expected)
    assert np.allclose(tfidf.ensemble_weights(x, c, 1e6)[0], 1 / 3)  # T -> inf: uniform
