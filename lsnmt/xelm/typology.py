"""Linguistic typology clustering (x-elm Sec. 3.2, Fig. 2) and the HMR donors (Sec. 6.3).

Each language is its URIEL feature vector (:mod:`lsnmt.xelm.uriel`, ``typology.feature_set``). The distance
of two vectors is x-elm's cosine distance over the features both have (missing values skipped)::

    d(u, v) = 1 - sum_{i in U ∩ V} u_i v_i / sqrt(sum_{i in U} u_i^2 * sum_{i in V} v_i^2)

The hierarchy starts from one cluster per language. Each round pairs every cluster with exactly one other,
greedily: the closest pair of clusters is merged first, then the closest pair among those left, and so on
(x-elm's ``lang_clustering.py``); with an odd count the last cluster waits for the next round. The distance of
two clusters is the smallest distance between their members (``linkage: single``, the default: the released code,
whose k = 4 sets are those the authors' experts trained on, see :class:`~lsnmt.xelm.config.TypologyConfig`) or
that of their centroids (the mean of the members' vectors, ``linkage: centroid``, a reading of x-elm Sec. 3.2).
Ties break by cluster order, so the hierarchy is deterministic. The clusters of the round with k clusters are the k
experts' language sets, numbered in the order they were formed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from lsnmt.xelm.config import TypologyConfig
from lsnmt.xelm.uriel import get_features


def cosine_distance(u: np.ndarray, v: np.ndarray) -> float:
    """x-elm's cosine distance, skipping missing (``nan``) features (see the module docstring)."""
    both = ~np.isnan(u) & ~np.isnan(v)
    uu, vv = np.nansum(u * u), np.nansum(v * v)
    if uu == 0 or vv == 0:
        return 1.0
    return float(1.0 - np.sum(u[both] * v[both]) / np.sqrt(uu * vv))


def centroid(vectors: list[np.ndarray]) -> np.ndarray:
    """Mean of the members per feature, over the members that have it (``nan`` if none has)."""
    stack = np.stack(vectors)
    with np.errstate(invalid="ignore"):
        total = np.nansum(stack, axis=0)
        count = np.sum(~np.isnan(stack), axis=0)
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def language_vectors(langs: list[str], cfg: TypologyConfig) -> dict[str, np.ndarray]:
    _, values = get_features(langs, cfg.feature_set, minimal=cfg.minimal)
    return {lang: values[i] for i, lang in enumerate(langs)}


def cluster_distance(a: list[str], b: list[str], vectors: dict[str, np.ndarray], linkage: str) -> float:
    if linkage == "single":
        return min(cosine_distance(vectors[x], vectors[y]) for x in a for y in b)
    return cosine_distance(centroid([vectors[x] for x in a]), centroid([vectors[y] for y in b]))


@dataclass(frozen=True)
class Round:
    """One level of the hierarchy: its clusters and the merges that formed them from the level below."""

    clusters: list[list[str]]
    merges: list[tuple[list[str], list[str], float]]


def hierarchy(langs: list[str], vectors: dict[str, np.ndarray], linkage: str = "single") -> list[Round]:
    """Rounds from one cluster per language down to a single cluster (see the module docstring)."""
    rounds = [Round([[x] for x in langs], [])]
    while len(rounds[-1].clusters) > 1:
        clusters = rounds[-1].clusters
        pairs = sorted((cluster_distance(clusters[i], clusters[j], vectors, linkage), i, j)
                       for i, j in itertools.combinations(range(len(clusters)), 2))
        used: set[int] = set()
        merged, merges = [], []
        for d, i, j in pairs:
            if i in used or j in used:
                continue
            used.update((i, j))
            merged.append(clusters[i] + clusters[j])
            merges.append((clusters[i], clusters[j], d))
        merged += [c for n, c in enumerate(clusters) if n not in used]
        rounds.append(Round(merged, merges))
    return rounds


def clusters_at(rounds: list[Round], k: int) -> list[list[str]]:
    """The language sets of the k-cluster round."""
    for r in rounds:
        if len(r.clusters) == k:
            return r.clusters
    raise ValueError(f"no round of the hierarchy has {k} clusters (sizes: {[len(r.clusters) for r in rounds]})")


def nearest(target: str, candidates: list[str], vectors: dict[str, np.ndarray]) -> tuple[str, float]:
    """The candidate closest to ``target`` (ties: first in ``candidates``) and its distance."""
    dists = [(cosine_distance(vectors[target], vectors[c]), i) for i, c in enumerate(candidates)]
    d, i = min(dists)
    return candidates[i], d


def distance_matrix(langs: list[str], vectors: dict[str, np.ndarray]) -> np.ndarray:
    return np.array([[cosine_distance(vectors[a], vectors[b]) for b in langs] for a in langs])
