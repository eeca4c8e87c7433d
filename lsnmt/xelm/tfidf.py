"""Balanced TF-IDF k-means (x-elm Sec. 3.2 after c-BTM, Gururangan et al. 2023) and the ensemble weights.

**Embedding.** ``phi(x) = normalize_2(SVD_r(tfidf(x)))``: word-level TF-IDF (scikit-learn's tokenizer,
tokens starting with a digit mapped to ``#NUMBER``), truncated SVD to ``r`` dimensions, L2 normalisation
(x-elm's ``train_clusterer.py``). An empty text embeds to the zero vector.

**Balanced k-means.** Lloyd iterations whose assignment step is balanced: with n points and k clusters,

    min_z sum_i ||phi_i - c_{z_i}||^2   subject to   floor(n/k) <= |{i : z_i = e}| <= ceil(n/k)  for every e,

a transportation problem solved exactly as a min-cost flow (successive shortest paths over the k clusters),
where c-BTM approximates it with an auction algorithm. The
centroids start from k-means++ and are the means of their members; at most ``iterations`` rounds, fewer
when the assignment stops changing. The whole corpus is then assigned in chunks of ``assign_chunk``
documents, each chunk balanced.

**Ensemble weights** (x-elm Sec. 3.3): ``alpha_e(x_<t) ∝ exp(-||phi(x_<t) - c_e||^2 / T)``, optionally
keeping the top m and renormalising.
"""

from __future__ import annotations

import heapq
import math
import pickle
from typing import BinaryIO

import numpy as np
from sklearn.cluster import kmeans_plusplus
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Normalizer

from lsnmt.xelm.config import TfidfConfig


class NumberNormalizingVectorizer(TfidfVectorizer):
    """TF-IDF whose tokens starting with a digit become ``#NUMBER`` (x-elm / c-BTM)."""

    def build_tokenizer(self):  # noqa: ANN201 (scikit-learn's signature)
        tokenize = super().build_tokenizer()
        return lambda doc: ["#NUMBER" if t[0].isdigit() else t for t in tokenize(doc)]


def build_embedder(cfg: TfidfConfig, n_docs: int) -> Pipeline:
    """Unfitted ``tfidf -> svd -> normalizer`` pipeline (SVD rank capped below the vocabulary and sample)."""
    vec_cls = NumberNormalizingVectorizer if cfg.number_normalizer else TfidfVectorizer
    stop = None if cfg.stop_words == "none" else cfg.stop_words
    vectorizer = vec_cls(max_features=cfg.max_features, stop_words=stop, dtype=np.float32)
    return Pipeline([("tfidf", vectorizer),
                     ("svd", TruncatedSVD(n_components=max(1, min(cfg.svd_dim, n_docs - 1)),
                                          random_state=cfg.seed)),
                     ("normalizer", Normalizer(copy=False))])


def fit_embedder(cfg: TfidfConfig, docs: list[str]) -> Pipeline:
    """The embedder fitted on ``docs`` (with one BLAS thread, as the cluster stage runs it, the floats are the
    same run after run)."""
    emb = build_embedder(cfg, len(docs))
    emb.fit(docs)
    n_vocab = len(emb.named_steps["tfidf"].vocabulary_)
    if emb.named_steps["svd"].n_components >= n_vocab:  # refit with a rank the vocabulary allows
        emb.set_params(svd__n_components=max(1, n_vocab - 1))
        emb.fit(docs)
    return emb


def dump_embedder(emb: Pipeline, fh: BinaryIO) -> None:
    """Pickle ``emb`` with stable bytes: without the vectorizer's ``stop_words_`` set (introspection only,
    pickled in hash order) and its stop-word cache key (a memory address)."""
    vec = emb.named_steps["tfidf"]
    vec.stop_words_ = None
    vec.__dict__.pop("_stop_words_id", None)
    pickle.dump(emb, fh)


def embed(emb: Pipeline, texts: list[str]) -> np.ndarray:
    """``(len(texts), r)`` float64, rows of norm 1 (0 for texts without a known word)."""
    return np.asarray(emb.transform(texts), dtype=np.float64)


def sq_distances(x: np.ndarray, centroids: np.ndarray) -> np.ndarray:
    """``||x_i - c_e||^2`` as ``(n, k)``, clipped at 0."""
    d = (x * x).sum(1)[:, None] - 2.0 * x @ centroids.T + (centroids * centroids).sum(1)[None, :]
    return np.maximum(d, 0.0)


def balanced_assign(cost: np.ndarray) -> np.ndarray:
    """Labels ``(n,)`` minimising ``sum_i cost[i, z_i]`` with cluster sizes in ``[floor(n/k), ceil(n/k)]``.

    Min-cost flow by successive shortest paths (see :class:`_Flow`), exact.
    """
    n, k = cost.shape
    if k == 1 or n == 0:
        return np.zeros(n, dtype=np.int64)
    return _Flow(np.asarray(cost, dtype=np.float64)).solve()


class _Flow:
    """The balanced assignment as a min-cost flow over the k clusters and a sink T.

    Start from every document at its cheapest cluster. Cluster e must keep ``lo = floor(n/k)`` documents and
    may keep one more by sending it to T, which takes ``r = n mod k`` such extras. A cluster with more than
    ``lo`` (+1 if it uses T) documents has excess; one unit at a time, the excess goes along the shortest path
    (Bellman-Ford, k + 1 nodes) to a cluster below ``lo`` or into T. Arc a -> b moves the document of a with the
    smallest ``cost[i, b] - cost[i, a]`` (one lazy heap per ordered pair); a -> T / T -> a take / release a's
    extra slot at cost 0. Augmenting along shortest paths keeps the flow optimal (no negative cycle), so the
    final assignment is a minimum-cost one under the size bounds.
    """

    def __init__(self, cost: np.ndarray) -> None:
        self.cost = cost
        n, self.k = cost.shape
        self.lo, self.r = divmod(n, self.k)
        self.z = cost.argmin(1)
        self.size = np.bincount(self.z, minlength=self.k)
        self.used = np.zeros(self.k, dtype=bool)
        self.heaps: dict[tuple[int, int], list[tuple[float, int]]] = {}
        for a in range(self.k):
            idx = np.flatnonzero(self.z == a)
            for b in range(self.k):
                if b != a:
                    h = list(zip((cost[idx, b] - cost[idx, a]).tolist(), idx.tolist(), strict=True))
                    heapq.heapify(h)
                    self.heaps[(a, b)] = h

    def _top(self, a: int, b: int) -> tuple[float, int] | None:
        h = self.heaps[(a, b)]
        while h and self.z[h[0][1]] != a:
            heapq.heappop(h)
        return h[0] if h else None

    def _excess(self, e: int) -> int:
        return int(self.size[e]) - self.lo - int(self.used[e])

    def _move(self, a: int, b: int) -> None:
        if self._top(a, b) is None:  # the arc exists only while a holds a document
            raise RuntimeError(f"no document to move from cluster {a} to {b}")
        _, i = heapq.heappop(self.heaps[(a, b)])
        self.z[i] = b
        self.size[a] -= 1
        self.size[b] += 1
        for x in range(self.k):
            if x != b:
                heapq.heappush(self.heaps[(b, x)], (float(self.cost[i, x] - self.cost[i, b]), i))

    def _shortest(self, sources: list[int]) -> tuple[list[float], list[int]]:
        k, inf = self.k, math.inf
        arcs = [(a, b, top[0]) for a in range(k) for b in range(k) if a != b and (top := self._top(a, b))]
        arcs += [(a, k, 0.0) if not self.used[a] else (k, a, 0.0) for a in range(k)]
        dist, pred = [inf] * (k + 1), [-1] * (k + 1)
        for s in sources:
            dist[s] = 0.0
        for _ in range(k + 1):
            changed = False
            for a, b, w in arcs:
                if dist[a] + w < dist[b] - 1e-12:
                    dist[b], pred[b], changed = dist[a] + w, a, True
            if not changed:
                break
        return dist, pred

    def solve(self) -> np.ndarray:
        k = self.k
        while sources := [e for e in range(k) if self._excess(e) > 0]:
            dist, pred = self._shortest(sources)
            sinks = [e for e in range(k) if self._excess(e) < 0] + ([k] if self.used.sum() < self.r else [])
            t = min((e for e in sinks if dist[e] < math.inf), key=lambda e: (dist[e], e))
            v = t
            while pred[v] != -1:  # from the sink back to a source: a document moved in is not moved on
                a, b = pred[v], v
                if b == k:
                    self.used[a] = True
                elif a == k:
                    self.used[b] = False
                else:
                    self._move(a, b)
                v = a
        return self.z.astype(np.int64)


def balanced_kmeans(x: np.ndarray, k: int, iterations: int, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """``(centroids (k, r), labels (n,), iterations run)`` (see the module docstring)."""
    if len(x) < k:
        raise ValueError(f"cannot form {k} clusters from {len(x)} documents")
    centroids, _ = kmeans_plusplus(x, k, random_state=seed)
    labels = np.full(len(x), -1)
    done = 0
    for done in range(1, iterations + 1):  # noqa: B007
        new = balanced_assign(sq_distances(x, centroids))
        stable = np.array_equal(new, labels)
        labels = new
        centroids = np.stack([x[labels == e].mean(0) for e in range(k)])
        if stable:
            break
    return centroids, labels, done


def assign(x: np.ndarray, centroids: np.ndarray, mode: str, chunk: int) -> np.ndarray:
    """Cluster of every row: balanced within each chunk of ``chunk`` rows, or the nearest centroid."""
    if mode == "nearest":
        return sq_distances(x, centroids).argmin(1)
    parts = [balanced_assign(sq_distances(x[s:s + chunk], centroids)) for s in range(0, len(x), chunk)]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def ensemble_weights(x: np.ndarray, centroids: np.ndarray, temperature: float, top_m: int | None = None
                     ) -> np.ndarray:
    """``alpha (n, k)``: softmax of ``-||x - c_e||^2 / T`` over experts, rows summing to 1; ``top_m`` keeps the m
    largest weights of each row and renormalises (x-elm Sec. 3.3, App. B.2)."""
    logits = -sq_distances(x, centroids) / temperature
    logits -= logits.max(1, keepdims=True)
    w = np.exp(logits)
    if top_m is not None and top_m < w.shape[1]:
        drop = np.argsort(-w, axis=1, kind="stable")[:, top_m:]
        np.put_along_axis(w, drop, 0.0, axis=1)
    return w / w.sum(1, keepdims=True)
