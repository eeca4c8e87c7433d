"""Where the x-elm stages read and write, for one experiment ``exp``: the folders are :mod:`lsnmt.paths`' (declared
by the stage table), resolved here for the x-elm modules that read another job's output::

    data/{exp}/lm                   lm_data     {train,valid}/{lang}.txt (one document per line),
                                                {train,valid}/{lang}.{bin,idx} (token shards), meta.json
    results/{exp}/xelm/cluster      cluster     tfidf/{vectorizer.pkl, k{k}/...}, typology/..., donors.json
    results/{exp}/xelm/seed         lm_seed     model.pt, curve.tsv
    results/{exp}/xelm/experts/{id} lm_expert   model.pt, curve.tsv, data.json
    results/{exp}/xelm/hmr/{lang}   lm_hmr      model.pt, curve.tsv, data.json
    results/{exp}/xelm/lapt         lm_lapt     model.pt, curve.tsv, data.json
    results/{exp}/xelm/eval         lm_eval     perplexity tables and figure data (TSV / JSON)
    results/{exp}/xelm/icl          lm_icl      in-context accuracies (TSV / JSON)
    results/{exp}/metrics/lm_eval   lm_eval     average perplexity per model, one file each (DVC metrics,
                                                lsnmt.eval.metrics)
    results/{exp}/metrics/lm_icl    lm_icl      accuracy per task@shots and setting, one file each (DVC metrics)
    work/{exp}/xelm/ckpt/{job}                  resumable training state (undeclared)
"""

from __future__ import annotations

from pathlib import Path

from lsnmt import paths as P


def lm_dir(exp: str) -> Path:
    return P.at(P.LM, exp)


def cluster_dir(exp: str) -> Path:
    return P.at(P.CLUSTER, exp)


def seed_dir(exp: str) -> Path:
    return P.at(P.SEED, exp)


def expert_dir(exp: str, expert: str) -> Path:
    return P.at(P.EXPERT, exp, expert=expert)


def hmr_dir(exp: str, target: str) -> Path:
    return P.at(P.HMR, exp, target=target)


def lapt_dir(exp: str) -> Path:
    return P.at(P.LAPT, exp)


def eval_dir(exp: str) -> Path:
    return P.at(P.LM_EVAL, exp)


def icl_dir(exp: str) -> Path:
    return P.at(P.ICL, exp)


def ckpt_dir(exp: str, job: str) -> Path:
    return P.at(P.LM_CKPT, exp, job=job)
