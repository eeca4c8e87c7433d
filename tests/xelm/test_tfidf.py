"""Balanced TF-IDF clustering and the ensemble weights (x-elm Sec. 3.2-3.3)."""

from __future__ import annotations

import dataclasses
import math
import pickle
from pathlib import Path

import numpy as np
import pytest
from scipy import sparse
from scipy.optimize import linprog

from lsnmt.data.shards import ShardWriter
from lsnmt.io import DataError, iter_lines
from lsnmt.xelm import cluster, tfidf
from lsnmt.xelm.config import TfidfConfig
from tests.conftest import ROOT
from tests.xelm.helpers import experiment

TATOEBA = {"de": "eng-deu/test.deu", "fr": "eng-fra/test.fra", "ru": "eng-rus/test.rus", "tr": "eng-tur/test.tur"}


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
        assigned = tfidf.assign(tfidf.sq_distances(x, centroids), "balanced", 100, 1)  # each chunk balanced
        assert np.bincount(assigned, minlength=k).max() - np.bincount(assigned, minlength=k).min() <= 450 // 100 + 1


def test_shuffled_chunks_cover_every_row_once() -> None:
    parts = list(tfidf.shuffled_chunks(1001, 100, 7))
    assert len(parts) == 11 and {len(p) for p in parts} <= {91, 92}
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(1001))
    assert all(np.array_equal(a, b) for a, b in zip(parts, tfidf.shuffled_chunks(1001, 100, 7), strict=True))
    assert not np.array_equal(parts[0], np.arange(len(parts[0])))  # not in corpus order


def _real_lm_dir(root: Path, docs: int) -> Path:
    """``root/lm/train``: the first ``docs`` Tatoeba sentences of each language as documents (text + sizes)."""
    train = root / "lm" / "train"
    train.mkdir(parents=True)
    for lang, rel in TATOEBA.items():
        texts = list(iter_lines(ROOT / "embedded" / "tatoeba" / rel))[:docs]
        (train / f"{lang}.txt").write_text("".join(t + "\n" for t in texts), encoding="utf-8")
        writer = ShardWriter(train / lang, 8)
        writer.add_many([[4] * max(1, len(t.split())) for t in texts])
        writer.close()
    return root / "lm"


def test_tfidf_experts_concentrate_each_language(tmp_path: Path) -> None:
    """x-elm Sec. 3.2 / Fig. 5: balanced clusters of real text follow languages. Chunks in corpus order (one
    language each, split 1/k by the balance) would give every language about 1/4 of each expert."""
    docs = 400
    lm = _real_lm_dir(tmp_path, docs)
    cfg = experiment().xelm
    assert cfg is not None
    cfg = dataclasses.replace(cfg, experts=dataclasses.replace(cfg.experts, k=(4,), main_k=4),
                              tfidf=TfidfConfig(max_features=5000, svd_dim=20, fit_docs=4 * docs, iterations=10,
                                                assign_chunk=200))
    out = tmp_path / "out"
    out.mkdir()
    summary = cluster.run_tfidf(cfg, lm, list(TATOEBA), {x: docs for x in TATOEBA}, out)[4]
    top = {x: max(shares) for x, shares in summary["shares"].items()}
    assert min(top.values()) >= 0.5, top
    assert np.mean(list(top.values())) >= 0.7, top
    assert max(summary["docs"]) - min(summary["docs"]) <= 4 * len(TATOEBA) * docs // 200  # still balanced per chunk
    assert sorted(p.name for p in (out / "tfidf").iterdir()) == ["embedder.json", "idf.npy", "k4", "svd.npy"]


def _fitted(tmp_path: Path) -> tuple[list[str], TfidfConfig]:
    texts = [t for rel in TATOEBA.values() for t in list(iter_lines(ROOT / "embedded" / "tatoeba" / rel))[:100]]
    return texts + ["in 1999 we met", ""], TfidfConfig(max_features=3000, svd_dim=16, fit_docs=400)


def test_embedder_is_scikit_learns_pipeline(tmp_path: Path) -> None:
    texts, cfg = _fitted(tmp_path)
    pipe, emb = tfidf.fit_pipeline(cfg, texts), tfidf.fit_embedder(cfg, texts)
    assert np.allclose(emb.transform(texts), pipe.transform(texts), atol=1e-5)
    tfidf.save_embedder(emb, tmp_path)
    again = tfidf.load_embedder(tmp_path)
    assert np.array_equal(again.transform(texts), emb.transform(texts))
    first = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    tfidf.save_embedder(tfidf.fit_embedder(cfg, texts), tmp_path)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == first  # stable bytes


class _Payload:
    """Unpickling this creates the file ``marker`` (what a crafted artifact could do instead)."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (str(self.marker), "w"))


def test_a_pickled_artifact_is_never_loaded(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    folder = tmp_path / "tfidf"
    folder.mkdir()
    (folder / "embedder.pkl").write_bytes(pickle.dumps(_Payload(marker)))  # where the old pickle lived
    with pytest.raises(DataError, match="embedder.json: not found"):
        tfidf.load_embedder(folder)
    texts, cfg = _fitted(tmp_path)
    tfidf.save_embedder(tfidf.fit_embedder(cfg, texts), folder)
    tfidf.load_embedder(folder)  # the pickle beside the real files is ignored
    np.save(folder / "svd.npy", np.array([_Payload(marker)], dtype=object), allow_pickle=True)
    with pytest.raises(DataError, match="cannot read"):
        tfidf.load_embedder(folder)
    assert not marker.exists()


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
