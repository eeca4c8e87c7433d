"""The ``cluster`` stage: both data allocations of x-elm Sec. 3.2, for every k of ``xelm.experts.k``.

Outputs (``results/{exp}/xelm/cluster``)::

    docs.json                 the training documents clustered: languages in order, documents per language
    tfidf/embedder.json       fitted TF-IDF -> SVD -> L2 embedder: settings and vocabulary (no pickle)
    tfidf/idf.npy, svd.npy    its idf vector and SVD components
    tfidf/k{k}/centroids.npy  (k, r) balanced k-means centroids
    tfidf/k{k}/assign.npy     expert of every training document, languages in docs.json order (balanced within
                              seeded chunks of documents shuffled across languages, x-elm Sec. 3.2)
    tfidf/k{k}/summary.json   cluster sizes, each language's token share per expert (x-elm Fig. 5), top-1 expert
                              per language (the one holding the largest share of its data, Sec. 3.3)
    typology/hierarchy.json   the balanced hierarchy, round by round with merge distances (x-elm Fig. 2)
    typology/distances.tsv    pairwise URIEL distances of the pretraining languages
    typology/k{k}.json        each expert's languages, and each language's expert
    donors.json               HMR donor of each target language (Sec. 6.3) with its distance
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from lsnmt.io import DataError, atomic_dir, atomic_write, iter_lines, write_json
from lsnmt.xelm import tfidf, typology
from lsnmt.xelm.config import XelmConfig
from lsnmt.xelm.corpus import doc_sizes
from lsnmt.xelm.lmdata import load_meta

log = logging.getLogger(__name__)


def _texts(lm_dir: Path, langs: list[str]) -> Iterator[str]:
    for lang in langs:
        yield from iter_lines(lm_dir / "train" / f"{lang}.txt")


def _chunks(it: Iterator[str], size: int) -> Iterator[list[str]]:
    chunk: list[str] = []
    for x in it:
        chunk.append(x)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def _fit_sample(lm_dir: Path, langs: list[str], total: int, n: int, seed: int) -> list[str]:
    keep = set(np.random.default_rng(seed).choice(total, size=min(n, total), replace=False).tolist())
    return [t for i, t in enumerate(_texts(lm_dir, langs)) if i in keep]


def _costs(emb: tfidf.Embedder, centroids: dict[int, np.ndarray], lm_dir: Path, langs: list[str], total: int,
           chunk: int, scratch: Path) -> dict[int, np.ndarray]:
    """Squared distance of every training document (docs.json order) to each centroid, per k: float32 memory
    maps in ``scratch`` (the corpus is embedded once, in order, whatever order the assignment takes)."""
    costs = {k: np.lib.format.open_memmap(scratch / f"cost-k{k}.npy", mode="w+", dtype=np.float32,
                                          shape=(total, k)) for k in centroids}
    start = 0
    for texts in _chunks(_texts(lm_dir, langs), chunk):
        x = tfidf.embed(emb, texts)
        for k, c in centroids.items():
            costs[k][start:start + len(texts)] = tfidf.sq_distances(x, c)
        start += len(texts)
    if start != total:
        raise DataError(f"{lm_dir}/train: {start} documents, docs.json says {total} (run lm_data again)")
    return costs


def run_tfidf(cfg: XelmConfig, lm_dir: Path, langs: list[str], docs: dict[str, int], out: Path) -> dict:
    """Fit the embedder and one balanced k-means per k on a sample; assign every document; write ``out``."""
    tc = cfg.tfidf
    total = sum(docs.values())
    sample = _fit_sample(lm_dir, langs, total, tc.fit_docs, tc.seed)
    emb = tfidf.fit_embedder(tc, sample)
    x_fit = tfidf.embed(emb, sample)
    centroids = {}
    iters = {}
    for k in cfg.experts.k:
        centroids[k], _, iters[k] = tfidf.balanced_kmeans(x_fit, k, tc.iterations, tc.seed)
        log.info("tfidf k=%d: balanced k-means on %d documents, %d iterations", k, len(sample), iters[k])
    (out / "tfidf").mkdir()
    tfidf.save_embedder(emb, out / "tfidf")
    labels: dict[int, np.ndarray] = {}
    with tempfile.TemporaryDirectory(dir=out, prefix=".costs-") as scratch:
        costs = _costs(emb, centroids, lm_dir, langs, total, tc.assign_chunk, Path(scratch))
        for k in cfg.experts.k:
            labels[k] = tfidf.assign(costs[k], tc.assign, tc.assign_chunk, tc.seed)
        del costs
    sizes = np.concatenate([doc_sizes(lm_dir, "train", lang) for lang in langs])
    lang_of = np.repeat(np.arange(len(langs)), [docs[x] for x in langs])
    summary = {}
    for k in cfg.experts.k:
        assign = labels[k]
        d = out / "tfidf" / f"k{k}"
        d.mkdir()
        np.save(d / "centroids.npy", centroids[k])
        np.save(d / "assign.npy", assign.astype(np.int32))
        summary[k] = _tfidf_summary(assign, sizes, lang_of, langs, k, iters[k], len(sample))
        write_json(d / "summary.json", summary[k])
    return summary


def _tfidf_summary(assign: np.ndarray, sizes: np.ndarray, lang_of: np.ndarray, langs: list[str], k: int,
                   iterations: int, fit_docs: int) -> dict:
    shares, top1 = {}, {}
    for i, lang in enumerate(langs):
        tok = np.bincount(assign[lang_of == i], weights=sizes[lang_of == i], minlength=k)
        shares[lang] = (tok / tok.sum()).round(6).tolist()
        top1[lang] = int(np.argmax(tok))
    return {"k": k, "docs": np.bincount(assign, minlength=k).tolist(),
            "tokens": np.bincount(assign, weights=sizes, minlength=k).astype(int).tolist(),
            "shares": shares, "top1": top1, "iterations": iterations, "fit_docs": fit_docs}


def run_typology(cfg: XelmConfig, langs: list[str], targets: list[str], out: Path) -> dict:
    """The hierarchy over the pretraining languages, its k-cluster cuts, and the HMR donors."""
    tc = cfg.typology
    vectors = typology.language_vectors(langs, tc)
    rounds = typology.hierarchy(langs, vectors, tc.linkage)
    d = out / "typology"
    d.mkdir()
    write_json(d / "hierarchy.json", {
        "languages": langs, "feature_set": tc.feature_set, "minimal": tc.minimal, "linkage": tc.linkage,
        "rounds": [{"k": len(r.clusters), "clusters": r.clusters,
                    "merges": [{"a": a, "b": b, "distance": round(dist, 6)} for a, b, dist in r.merges]}
                   for r in rounds]})
    dist = typology.distance_matrix(langs, vectors)
    with atomic_write(d / "distances.tsv") as fh:
        fh.write("\t".join(["lang", *langs]) + "\n")
        fh.writelines("\t".join([a, *(f"{x:.6f}" for x in row)]) + "\n" for a, row in zip(langs, dist, strict=True))
    for k in cfg.experts.k:
        clusters = typology.clusters_at(rounds, k)
        write_json(d / f"k{k}.json", {"k": k, "clusters": clusters,
                                      "expert_of": {x: e for e, c in enumerate(clusters) for x in c}})
    donors = {}
    if targets:  # features over pretraining + target languages (``minimal`` depends on the set)
        both = typology.language_vectors(langs + targets, tc)
        for t in targets:
            if t in cfg.hmr.donors:
                donor = cfg.hmr.donors[t]
                donors[t] = {"donor": donor, "distance": round(typology.cosine_distance(both[t], both[donor]), 6),
                             "source": "params.yaml xelm.hmr.donors"}
            else:
                donor, dd = typology.nearest(t, langs, both)
                donors[t] = {"donor": donor, "distance": round(dd, 6), "source": "nearest by typology"}
            log.info("HMR donor of %s: %s (%s)", t, donors[t]["donor"], donors[t]["source"])
    write_json(out / "donors.json", donors)
    return {"rounds": len(rounds), "donors": donors}


def cluster(cfg: XelmConfig, lm_dir: Path, out: Path) -> dict:
    """Run both allocations of ``cfg`` (the ``xelm`` section) into ``out`` atomically."""
    meta = load_meta(lm_dir)
    langs, targets = list(meta["languages"]), list(meta["targets"])
    docs = {x: int(meta["docs"]["train"][x]) for x in langs}
    with atomic_dir(out) as tmp, threadpool_limits(limits=1):  # one BLAS thread: the same floats every run
        write_json(tmp / "docs.json", {"languages": langs, "docs": docs})
        tf = run_tfidf(cfg, lm_dir, langs, docs, tmp)
        ty = run_typology(cfg, langs, targets, tmp)
    return {"tfidf": {k: v["docs"] for k, v in tf.items()}, "typology": ty}
