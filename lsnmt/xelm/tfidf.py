"""Balanced TF-IDF k-means (x-elm Sec. 3.2 after c-BTM, Gururangan et al. 2023) and the ensemble weights.

**Embedding.** ``phi(x) = normalize_2(SVD_r(tfidf(x)))``: word-level TF-IDF (scikit-learn's tokenizer,
tokens starting with a digit mapped to ``#NUMBER``), truncated SVD to ``r`` dimensions, L2 normalisation
(x-elm's ``train_clusterer.py``). An empty text embeds to the zero vector. It is fitted with scikit-learn and
kept as an :class:`Embedder`: vocabulary and settings in JSON, idf and SVD components as ``.npy`` read with
``allow_pickle=False``, so that loading a shared artifact never runs code (no pickle).

**Balanced k-means.** Lloyd iterations whose assignment step is balanced: with n points and k clusters,

    min_z sum_i ||phi_i - c_{z_i}||^2   subject to   floor(n/k) <= |{i : z_i = e}| <= ceil(n/k)  for every e,

a transportation problem solved exactly as a min-cost flow (successive shortest paths over the k clusters),
where c-BTM approximates it with an auction algorithm. The
centroids start from k-means++ and are the means of their members; at most ``iterations`` rounds, fewer
when the assignment stops changing. The whole corpus is then assigned in balanced chunks of about
``assign_chunk`` documents drawn from a seeded permutation of *all* documents: the authors shuffle every mC4
shard across languages before their balanced batches. Chunks taken in corpus (language) order would each hold
one language, and balancing such a chunk splits that language 1/k into every expert.

**Ensemble weights** (x-elm Sec. 3.3): ``alpha_e(x_<t) ∝ exp(-||phi(x_<t) - c_e||^2 / T)``, optionally
keeping the top m and renormalising.
"""

from __future__ import annotations

import heapq
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from sklearn.cluster import kmeans_plusplus
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import Normalizer, normalize

from lsnmt.io import DataError, atomic_write, write_json
from lsnmt.xelm.config import TfidfConfig

FORMAT = "lsnmt-tfidf-embedder/1"
"""``format`` of ``embedder.json``; the files an :class:`Embedder` is saved as follow."""
FILES = ("embedder.json", "idf.npy", "svd.npy")


class _NumberTokens:
    """Tokens starting with a digit become ``#NUMBER`` (x-elm / c-BTM)."""

    def build_tokenizer(self):  # scikit-learn's signature
        tokenize = super().build_tokenizer()  # type: ignore[misc]
        return lambda doc: ["#NUMBER" if t[0].isdigit() else t for t in tokenize(doc)]


class NumberNormalizingVectorizer(_NumberTokens, TfidfVectorizer):
    """TF-IDF whose tokens starting with a digit become ``#NUMBER`` (x-elm / c-BTM)."""


class _NumberNormalizingCounter(_NumberTokens, CountVectorizer):
    """Term counts over a fixed vocabulary with the same tokens."""


@dataclass(frozen=True, kw_only=True)
class Embedder:
    """The fitted ``phi``: scikit-learn's TF-IDF (smooth idf, L2) -> truncated SVD -> L2, as plain arrays."""

    terms: tuple[str, ...]
    """TF-IDF vocabulary in column order."""
    idf: np.ndarray
    """``(V,)`` inverse document frequencies."""
    components: np.ndarray
    """``(r, V)`` SVD components."""
    number_normalizer: bool

    def __post_init__(self) -> None:
        if self.idf.shape != (len(self.terms),) or self.components.ndim != 2 \
                or self.components.shape[1] != len(self.terms):
            raise DataError(f"TF-IDF embedder: {len(self.terms)} terms, idf {self.idf.shape}, SVD "
                            f"{self.components.shape} do not fit together")

    def transform(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), r)`` float64, rows of norm 1 (0 for texts without a known word)."""
        counter_cls = _NumberNormalizingCounter if self.number_normalizer else CountVectorizer
        counter = counter_cls(vocabulary={t: i for i, t in enumerate(self.terms)}, dtype=self.idf.dtype)
        tf = normalize(counter.transform(texts).multiply(self.idf[None, :]).tocsr(), copy=False)
        return normalize(np.asarray(tf @ self.components.T, dtype=np.float64), copy=False)


def build_embedder(cfg: TfidfConfig, n_docs: int) -> Pipeline:
    """Unfitted ``tfidf -> svd -> normalizer`` pipeline (SVD rank capped below the vocabulary and sample)."""
    vec_cls = NumberNormalizingVectorizer if cfg.number_normalizer else TfidfVectorizer
    stop = None if cfg.stop_words == "none" else cfg.stop_words
    vectorizer = vec_cls(max_features=cfg.max_features, stop_words=stop, dtype=np.float32)
    return Pipeline([("tfidf", vectorizer),
                     ("svd", TruncatedSVD(n_components=max(1, min(cfg.svd_dim, n_docs - 1)),
                                          random_state=cfg.seed)),
                     ("normalizer", Normalizer(copy=False))])


def fit_pipeline(cfg: TfidfConfig, docs: list[str]) -> Pipeline:
    """The scikit-learn pipeline fitted on ``docs`` (with one BLAS thread, as the cluster stage runs it, the
    floats are the same run after run)."""
    emb = build_embedder(cfg, len(docs))
    emb.fit(docs)
    n_vocab = len(emb.named_steps["tfidf"].vocabulary_)
    if emb.named_steps["svd"].n_components >= n_vocab:  # refit with a rank the vocabulary allows
        emb.set_params(svd__n_components=max(1, n_vocab - 1))
        emb.fit(docs)
    return emb


def fit_embedder(cfg: TfidfConfig, docs: list[str]) -> Embedder:
    """:func:`fit_pipeline` as an :class:`Embedder` (stop words only shape the vocabulary, so they are not kept)."""
    pipe = fit_pipeline(cfg, docs)
    vec = pipe.named_steps["tfidf"]
    terms = sorted(vec.vocabulary_, key=vec.vocabulary_.__getitem__)
    return Embedder(terms=tuple(terms), idf=np.asarray(vec.idf_), components=pipe.named_steps["svd"].components_,
                    number_normalizer=cfg.number_normalizer)


def save_embedder(emb: Embedder, folder: Path) -> None:
    """``folder/embedder.json`` (settings, vocabulary), ``idf.npy``, ``svd.npy``: stable bytes, no pickle."""
    write_json(folder / "embedder.json", {"format": FORMAT, "number_normalizer": emb.number_normalizer,
                                          "terms": list(emb.terms)})
    for name, arr in (("idf.npy", emb.idf), ("svd.npy", emb.components)):
        with atomic_write(folder / name, "wb", encoding=None) as fh:
            np.save(fh, np.ascontiguousarray(arr), allow_pickle=False)


def load_embedder(folder: Path) -> Embedder:
    """The embedder :func:`save_embedder` wrote; never unpickles (an ``embedder.pkl`` of an older run is ignored)."""
    path = folder / "embedder.json"
    if not path.is_file():
        raise DataError(f"{path}: not found (run the cluster stage again; a pickled embedder.pkl is never loaded)")
    meta = json.loads(path.read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT:
        raise DataError(f"{path}: format {meta.get('format')!r}, expected {FORMAT!r} (run the cluster stage again)")
    try:
        idf, svd = (np.load(folder / name, allow_pickle=False) for name in ("idf.npy", "svd.npy"))
    except (OSError, ValueError) as exc:
        raise DataError(f"{folder}: cannot read the embedder's arrays ({exc})") from None
    if not all(isinstance(t, str) for t in meta["terms"]) or idf.dtype.kind != "f" or svd.dtype.kind != "f":
        raise DataError(f"{folder}: the embedder's terms must be strings and its arrays floating point")
    return Embedder(terms=tuple(meta["terms"]), idf=idf, components=svd,
                    number_normalizer=bool(meta["number_normalizer"]))


def embed(emb: Embedder, texts: list[str]) -> np.ndarray:
    """``(len(texts), r)`` float64, rows of norm 1 (0 for texts without a known word)."""
    return emb.transform(texts)


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


def shuffled_chunks(n: int, chunk: int, seed: int) -> Iterator[np.ndarray]:
    """Row indices of each balanced-assignment problem: a seeded permutation of all ``n`` rows cut into
    ``ceil(n / chunk)`` near-equal parts, each sorted (so a memory-mapped cost matrix is read in order)."""
    if n == 0:
        return
    order = np.random.default_rng([seed, 2]).permutation(n)
    for part in np.array_split(order, -(-n // chunk)):
        yield np.sort(part)


def assign(cost: np.ndarray, mode: str, chunk: int, seed: int) -> np.ndarray:
    """Cluster of every row of ``cost`` ``(n, k)`` (squared distances; may be memory-mapped): the nearest
    centroid, or balanced within each chunk of :func:`shuffled_chunks` (languages mixed, see the module
    docstring)."""
    n = len(cost)
    z = np.zeros(n, dtype=np.int64)
    if mode == "nearest":
        for s in range(0, n, chunk):
            z[s:s + chunk] = np.asarray(cost[s:s + chunk]).argmin(1)
        return z
    for idx in shuffled_chunks(n, chunk, seed):
        z[idx] = balanced_assign(np.asarray(cost[idx], dtype=np.float64))
    return z


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
