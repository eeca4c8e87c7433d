"""Which data and which starting weights each x-elm training job gets.

=====================  ==============================================  =====================================
job                    data                                            branches from, tokens per update
=====================  ==============================================  =====================================
seed                   every pretraining language                      random init, ``seed.batch_tokens``
dense-k1-e0            every pretraining language                      seed, ``experts.batch_tokens``
tfidf-k{k}-e{i}        documents the balanced k-means put in cluster i  seed, ``experts.batch_tokens / k``
typology-k{k}-e{i}     the languages of typology cluster i              seed, ``experts.batch_tokens / k``
hmr@{t}                donor(t) and t                                  the ``main_k`` typology expert of the
                                                                       donor, ``hmr.batch_tokens / #targets``
lapt                   every target and every donor                    dense-k1-e0, ``hmr.batch_tokens``
=====================  ==============================================  =====================================

Every expert set of a given k thus sees the same total tokens in the same number of updates as the dense
model (x-elm Table 4, Sec. 5.2); each expert starts from the seed (x-BTM Step 1, "branch").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from lsnmt import paths as P
from lsnmt.io import DataError
from lsnmt.xelm.config import ExpertId, XelmConfig
from lsnmt.xelm.corpus import Selection
from lsnmt.xelm.lmdata import load_meta
from lsnmt.xelm.trainer import LMJob


def _read(path: Path) -> dict:
    if not path.is_file():
        raise DataError(f"{path}: not found (run the stage that writes it first)")
    return json.loads(path.read_text(encoding="utf-8"))


def typology_clusters(cluster_dir: Path, k: int) -> list[list[str]]:
    return _read(cluster_dir / "typology" / f"k{k}.json")["clusters"]


def tfidf_selection(lm_dir: Path, cluster_dir: Path, k: int, expert: int) -> Selection:
    """The training documents assigned to TF-IDF expert ``expert`` of the k-expert set."""
    docs = _read(cluster_dir / "docs.json")
    assign = np.load(cluster_dir / "tfidf" / f"k{k}" / "assign.npy")
    out, start = {}, 0
    for lang in docs["languages"]:
        n = int(docs["docs"][lang])
        idx = np.flatnonzero(assign[start:start + n] == expert)
        if len(idx):
            out[lang] = idx
        start += n
    if start != len(assign):
        raise DataError(f"{cluster_dir}: assign.npy has {len(assign)} documents, docs.json {start}")
    return Selection(out)


def seed_job(cfg: XelmConfig, lm_dir: Path) -> LMJob:
    """The seed LM's job (``cfg``: the ``xelm`` section)."""
    langs = load_meta(lm_dir)["languages"]
    return LMJob("seed", cfg.seed, cfg.seed.batch_tokens, Selection.languages(lm_dir, langs))


def expert_job(cfg: XelmConfig, expert: str, lm_dir: Path, cluster_dir: Path, seed_model: Path) -> LMJob:
    """Expert ``expert``'s job, branched from ``seed_model``."""
    eid = ExpertId.parse(expert)
    langs = load_meta(lm_dir)["languages"]
    if eid.allocation == "dense":
        sel = Selection.languages(lm_dir, langs)
    elif eid.allocation == "tfidf":
        sel = tfidf_selection(lm_dir, cluster_dir, eid.k, eid.index)
    else:
        sel = Selection.languages(lm_dir, typology_clusters(cluster_dir, eid.k)[eid.index])
    return LMJob(expert, cfg.experts, cfg.experts.batch_tokens // eid.k, sel, init=seed_model)


def donors(cluster_dir: Path) -> dict[str, str]:
    return {t: v["donor"] for t, v in _read(cluster_dir / "donors.json").items()}


def donor_expert(cfg: XelmConfig, cluster_dir: Path, target: str) -> str:
    """Id of the ``main_k`` typology expert that holds ``target``'s donor."""
    k = cfg.experts.main_k
    donor = donors(cluster_dir)[target]
    expert_of = _read(cluster_dir / "typology" / f"k{k}.json")["expert_of"]
    return f"typology-k{k}-e{expert_of[donor]}"


def hmr_job(cfg: XelmConfig, exp: str, targets: tuple[str, ...], target: str, lm_dir: Path,
            cluster_dir: Path) -> LMJob:
    """HMR's job for ``target`` of ``targets`` (``lm_data.targets``) in experiment ``exp``, branched from its donor's
    typology expert."""
    if target not in targets:
        raise DataError(f"{target!r} is not one of lm_data.targets {list(targets)}")
    donor = donors(cluster_dir)[target]
    init = P.at(P.EXPERT, exp, expert=donor_expert(cfg, cluster_dir, target)) / "model.pt"
    return LMJob(f"hmr-{target}", cfg.hmr, cfg.hmr.batch_tokens // len(targets),
                 Selection.languages(lm_dir, [donor, target]), init=init)


def lapt_job(cfg: XelmConfig, exp: str, targets: tuple[str, ...], lm_dir: Path, cluster_dir: Path) -> LMJob:
    """The dense LAPT baseline's job in experiment ``exp``: every target of ``targets`` and its donor."""
    d = donors(cluster_dir)
    langs = list(dict.fromkeys([*targets, *(d[t] for t in targets)]))
    init = P.at(P.EXPERT, exp, expert="dense-k1-e0") / "model.pt"
    return LMJob("lapt", cfg.hmr, cfg.hmr.batch_tokens, Selection.languages(lm_dir, langs), init=init)
