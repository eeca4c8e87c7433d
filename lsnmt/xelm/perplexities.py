"""The ``lm_eval`` stage: perplexities of every x-elm model and inference method, as the paper's tables and figures.

Every model, every expert of every k included, scores the validation documents of each language
(:mod:`lsnmt.xelm.score`), so that forgetting (App. B.3, Fig. 6: each expert against the seed on every
pretraining language) covers k = 4 and 16 too. Inference methods (x-elm Sec. 3.3):

* ``typology``: the expert whose cluster holds the language (top-1 by language);
* ``tfidf_top1``: the TF-IDF expert trained on the largest share of the language's tokens;
* ``tfidf_ens``: all k TF-IDF experts mixed with ``alpha_e ∝ exp(-||phi(x_<t) - c_e||^2 / T)`` per position,
  ``phi`` the cluster stage's TF-IDF embedder applied to the decoded prefix of the document;
* ``tfidf_top{m}``: the same with only the m largest weights kept (App. B.2, Table 8).

Outputs (``results/{exp}/xelm/eval``; every perplexity is per token, EOS included, averages are means over
languages as the paper's "Avg." rows)::

    ppl.tsv         model / method, k, language, predicted tokens, perplexity (everything below derives from it)
    table1.tsv      seed, dense, TF-IDF top-1, TF-IDF ensemble, typology at main_k per language + avg (Tables 1, 7)
    table2.tsv      new languages and donors: seed, dense, TF-IDF ens (x-elm training), dense LAPT, HMR (Table 2)
    table8.tsv      TF-IDF top-1 vs ensembles of m experts at main_k (Table 8)
    figure3.tsv     perplexity vs k (k = 1 is dense) for TF-IDF top-1 and typology, per language + avg (Fig. 3)
    figure4.tsv     gain of the typology experts over seed and dense vs training tokens per language (Fig. 4)
    forgetting.tsv  every expert's perplexity minus the seed's on every language it scored (App. B.3, Fig. 6)
    summary.json    averages, Spearman correlations of Fig. 4, LAPT forgetting (Sec. 6.3 footnote); the stage
                    writes its Table 1 averages as DVC metrics (lsnmt.eval.metrics)
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from lsnmt import paths as P
from lsnmt.io import atomic_dir, atomic_write, write_json
from lsnmt.xelm import tfidf
from lsnmt.xelm.config import DENSE, ExpertId, XelmConfig, expert_ids
from lsnmt.xelm.corpus import valid_docs
from lsnmt.xelm.lmdata import load_meta, tokenizer
from lsnmt.xelm.score import doc_sequences, mixture_logprobs, perplexity, token_logprobs
from lsnmt.xelm.trainer import device_for, load_lm

log = logging.getLogger(__name__)

EXPERT = re.compile(r"(tfidf|typology)-k\d+-e\d+")
LogProbs = dict[str, dict[str, np.ndarray]]
"""model -> language -> log-probability of every predicted token of the language's validation documents."""


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def model_plan(cfg: XelmConfig, experiment: str, cluster_dir: Path, langs: list[str], targets: list[str]
               ) -> dict[str, tuple[Path, list[str]]]:
    """Every model of experiment ``experiment`` (``cfg``: its ``xelm`` section) to score: ``name -> (model.pt,
    languages)``."""
    everything = langs + targets
    plan = {"seed": (P.at(P.SEED, experiment) / "model.pt", everything)}
    for eid in map(ExpertId.parse, expert_ids(cfg)):
        plan[str(eid)] = (P.at(P.EXPERT, experiment, expert=str(eid)) / "model.pt", everything)
    for t in targets:
        donor = _json(cluster_dir / "donors.json")[t]["donor"]
        plan[f"hmr-{t}"] = (P.at(P.HMR, experiment, target=t) / "model.pt", [t, donor])
    if targets:
        plan["lapt"] = (P.at(P.LAPT, experiment) / "model.pt", everything)
    return plan


def score_all(plan: dict[str, tuple[Path, list[str]]], docs: dict[str, list[np.ndarray]], meta: dict, block: int,
              threads: int) -> LogProbs:
    device = device_for(threads)
    seqs = {lang: doc_sequences(d, meta["eos"]) for lang, d in docs.items()}
    out: LogProbs = {}
    for name, (path, langs) in plan.items():
        model = load_lm(path, device)
        out[name] = {x: np.concatenate(token_logprobs(model, seqs[x], block=block, pad=meta["pad"], device=device))
                     for x in langs}
        log.info("scored %s on %s", name, ", ".join(langs))
    return out


def prefix_texts(sp, docs: list[np.ndarray]) -> list[str]:
    """The decoded prefix ``x_<t`` of every predicted token of ``EOS d EOS`` (the doc's tokens before it)."""
    out = []
    for d in docs:
        ids = d.tolist()
        out += [sp.decode(ids[:t]) for t in range(len(ids) + 1)]
    return out


def ensembles(cfg: XelmConfig, cluster_dir: Path, lp: LogProbs, phis: dict[str, np.ndarray]) -> LogProbs:
    """``tfidf-k{k}-ens`` (every k) and ``tfidf-k{main}-top{m}`` mixtures, per language."""
    out: LogProbs = {}
    for k in cfg.experts.k:
        centroids = np.load(cluster_dir / "tfidf" / f"k{k}" / "centroids.npy")
        tops = [None] + [m for m in cfg.ensemble.top_m if k == cfg.experts.main_k]
        for m in tops:
            name = f"tfidf-k{k}-" + ("ens" if m is None else f"top{m}")
            out[name] = {}
            for lang, phi in phis.items():
                w = tfidf.ensemble_weights(phi, centroids, cfg.ensemble.temperature, m)
                experts = np.stack([lp[f"tfidf-k{k}-e{e}"][lang] for e in range(k)], axis=1)
                out[name][lang] = mixture_logprobs(w, experts)
    return out


def top1(cfg: XelmConfig, cluster_dir: Path, lp: LogProbs, langs: list[str]) -> LogProbs:
    """``typology-k{k}`` and ``tfidf-k{k}-top1``: the expert chosen per language before evaluation."""
    out: LogProbs = {}
    for k in cfg.experts.k:
        ty = _json(cluster_dir / "typology" / f"k{k}.json")["expert_of"]
        tf = _json(cluster_dir / "tfidf" / f"k{k}" / "summary.json")["top1"]
        out[f"typology-k{k}"] = {x: lp[f"typology-k{k}-e{ty[x]}"][x] for x in langs}
        out[f"tfidf-k{k}-top1"] = {x: lp[f"tfidf-k{k}-e{tf[x]}"][x] for x in langs}
    return out


def ppl_table(lp: LogProbs) -> dict[str, dict[str, float]]:
    return {name: {x: perplexity(v) for x, v in per.items()} for name, per in lp.items()}


def _avg(values: list[float]) -> float:
    return float(np.mean(values)) if values else float("nan")


def _fmt(x: float | int | str | None) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return ""
    return f"{x:.4f}" if isinstance(x, float) else str(x)


def write_tsv(path: Path, header: list[str], rows: list[list]) -> None:
    with atomic_write(path) as fh:
        fh.write("\t".join(header) + "\n")
        fh.writelines("\t".join(_fmt(x) for x in row) + "\n" for row in rows)


def _with_avg(columns: list[str], per_lang: Callable[[str, str], float], langs: list[str]) -> list[list]:
    rows = [[x, *(per_lang(c, x) for c in columns)] for x in langs]
    return rows + [["avg", *(_avg([per_lang(c, x) for x in langs]) for c in columns)]]


def evaluate(cfg: XelmConfig, experiment: str, lm_dir: Path, cluster_dir: Path, out: Path) -> dict:
    """Score every model of ``experiment`` (``cfg``: its ``xelm`` section), derive every table, write ``out``
    atomically; return ``summary.json``."""
    meta = load_meta(lm_dir)
    langs, targets = list(meta["languages"]), list(meta["targets"])
    docs = {x: valid_docs(lm_dir, x, meta["vocab_size"]) for x in langs + targets}
    lp = score_all(model_plan(cfg, experiment, cluster_dir, langs, targets), docs, meta, cfg.lm.block_size, cfg.threads)
    emb = tfidf.load_embedder(cluster_dir / "tfidf")
    sp = tokenizer(lm_dir)
    phis = {x: tfidf.embed(emb, prefix_texts(sp, docs[x])) for x in langs + targets}
    lp |= ensembles(cfg, cluster_dir, lp, phis) | top1(cfg, cluster_dir, lp, langs)
    ppl = ppl_table(lp)
    tokens = {name: {x: len(v) for x, v in per.items()} for name, per in lp.items()}
    with atomic_dir(out) as tmp:
        write_tsv(tmp / "ppl.tsv", ["model", "lang", "tokens", "ppl"],
                  [[n, x, tokens[n][x], p] for n in sorted(ppl) for x, p in sorted(ppl[n].items())])
        summary = write_tables(cfg, cluster_dir, meta, ppl, tmp)
        write_json(tmp / "summary.json", summary)
    return summary


def write_tables(cfg: XelmConfig, cluster_dir: Path, meta: dict, ppl: dict[str, dict[str, float]], tmp: Path) -> dict:
    langs, targets, main = list(meta["languages"]), list(meta["targets"]), cfg.experts.main_k
    cols = {"seed": "seed", "dense": DENSE, "tfidf_top1": f"tfidf-k{main}-top1", "tfidf_ens": f"tfidf-k{main}-ens",
            "typology": f"typology-k{main}"}
    def get(c: str, x: str) -> float:
        return ppl.get(cols.get(c, c), {}).get(x, float("nan"))

    table1 = _with_avg(list(cols), get, langs)
    write_tsv(tmp / "table1.tsv", ["lang", *cols], table1)
    write_tsv(tmp / "table2.tsv", ["role", "lang", "target", "seed", "dense", "tfidf_ens", "lapt", "hmr"],
              table2_rows(cluster_dir, ppl, targets, main))
    tops = [f"tfidf-k{main}-top1", *(f"tfidf-k{main}-top{m}" for m in cfg.ensemble.top_m), f"tfidf-k{main}-ens"]
    write_tsv(tmp / "table8.tsv", ["lang", "top1", *(f"m{m}" for m in cfg.ensemble.top_m), f"m{main}"],
              _with_avg(tops, lambda c, x: ppl[c].get(x, float("nan")), langs)
              + [[x, *(ppl[c].get(x, float("nan")) for c in tops)] for x in targets])
    write_tsv(tmp / "figure3.tsv", ["method", "k", "lang", "ppl"], figure3_rows(cfg, ppl, langs))
    fig4, rho = figure4(meta, ppl, langs, main)
    write_tsv(tmp / "figure4.tsv", ["lang", "train_tokens", "seed", "dense", "typology", "gain_vs_seed",
                                    "gain_vs_dense"], fig4)
    write_tsv(tmp / "forgetting.tsv", ["expert", "allocation", "k", "lang", "trained_on", "ppl", "seed", "delta"],
              forgetting_rows(cluster_dir, ppl, langs))
    return {"table1_avg": dict(zip(cols, table1[-1][1:], strict=True)), "main_k": main,
            "figure3_avg": {f"{r[0]}@k{r[1]}": r[3] for r in figure3_rows(cfg, ppl, langs) if r[2] == "avg"},
            "figure4_spearman": rho, "lapt_forgetting": lapt_forgetting(ppl, langs, targets, cluster_dir),
            "temperature": cfg.ensemble.temperature}


def table2_rows(cluster_dir: Path, ppl: dict[str, dict[str, float]], targets: list[str], main: int) -> list[list]:
    donors = {t: v["donor"] for t, v in _json(cluster_dir / "donors.json").items()}
    def row(role: str, lang: str, t: str) -> list:
        return [role, lang, t, *(ppl[m].get(lang, float("nan")) for m in ("seed", DENSE, f"tfidf-k{main}-ens")),
                ppl.get("lapt", {}).get(lang, float("nan")), ppl[f"hmr-{t}"].get(lang, float("nan"))]
    return [row("target", t, t) for t in targets] + [row("donor", donors[t], t) for t in targets]


def figure3_rows(cfg: XelmConfig, ppl: dict[str, dict[str, float]], langs: list[str]) -> list[list]:
    rows = []
    for method, name in (("tfidf_top1", "tfidf-k{k}-top1"), ("typology", "typology-k{k}")):
        for k in (1, *cfg.experts.k):
            values = ppl[DENSE if k == 1 else name.format(k=k)]
            rows += [[method, k, x, values[x]] for x in langs] + [[method, k, "avg", _avg([values[x] for x in langs])]]
    return rows


def figure4(meta: dict, ppl: dict[str, dict[str, float]], langs: list[str], main: int) -> tuple[list[list], dict]:
    rows = []
    for x in langs:
        s, d, t = ppl["seed"][x], ppl[DENSE][x], ppl[f"typology-k{main}"][x]
        rows.append([x, int(meta["tokens"]["train"][x]), s, d, t, s - t, d - t])
    size = [r[1] for r in rows]
    rho = {name: float(spearmanr(size, [r[i] for r in rows]).statistic) if len(rows) > 2 else float("nan")
           for name, i in (("vs_seed", 5), ("vs_dense", 6))}
    return rows, rho


def forgetting_rows(cluster_dir: Path, ppl: dict[str, dict[str, float]], langs: list[str]) -> list[list]:
    rows = []
    for name in sorted(n for n in ppl if EXPERT.fullmatch(n)):
        eid = ExpertId.parse(name)
        if eid.allocation == "typology":
            own = set(_json(cluster_dir / "typology" / f"k{eid.k}.json")["clusters"][eid.index])
        else:
            shares = _json(cluster_dir / "tfidf" / f"k{eid.k}" / "summary.json")["shares"]
            own = {x for x in langs if shares[x][eid.index] > 0}
        rows += [[name, eid.allocation, eid.k, x, x in own, p, ppl["seed"][x], p - ppl["seed"][x]]
                 for x, p in sorted(ppl[name].items()) if x in langs]
    return rows


def lapt_forgetting(ppl: dict[str, dict[str, float]], langs: list[str], targets: list[str], cluster_dir: Path
                    ) -> float | None:
    """Mean perplexity change of dense LAPT over the dense model on the languages it was not adapted to."""
    if "lapt" not in ppl:
        return None
    donors = {v["donor"] for v in _json(cluster_dir / "donors.json").values()}
    rest = [x for x in langs if x not in donors and x not in targets]
    return _avg([ppl["lapt"][x] - ppl[DENSE][x] for x in rest])
