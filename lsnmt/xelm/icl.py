"""The ``lm_icl`` stage: zero- and few-shot XNLI, XStoryCloze and PAWS-X (x-elm Sec. 7, App. A.2, Table 3).

XGLM's protocol as x-elm's ``prompt.py``: every candidate fills the prompt (:mod:`lsnmt.xelm.icl_data`); the
model scores the candidate's tokens after ``EOS + demonstrations + shared text`` (mean log-probability per
token) and the best-scoring candidate is the prediction. Few-shot: ``shots`` English demonstrations drawn from
the demonstration split, ``runs`` times with different draws, accuracies averaged; each run formats a
demonstration as ``shared + gold candidate + "\\n"``. ``examples`` random evaluation examples per language
(seeded, the same for every model). Languages: those of the task that are x-elm pretraining languages.

Settings (x-elm Table 3), at ``experts.main_k``: ``seed``, ``dense``, ``typology_trg`` (the expert of the
example's language), ``typology_en`` (few-shot only: the expert of English, the demonstrations' language),
``tfidf_top1`` (the expert with the largest share of the language) and ``tfidf_ens`` (all TF-IDF experts,
probabilities mixed per token with weights ``alpha_e ∝ exp(-||phi(example) - c_e||^2 / T)`` from the example's
own text, as x-elm's ``estimate_tfidf_cluster.py``). A task or language whose data is absent is recorded as
"not run" with the reason, never silently dropped.
"""

from __future__ import annotations

import json
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from lsnmt import paths as P
from lsnmt.data.config import DownloadConfig
from lsnmt.io import atomic_dir, write_json
from lsnmt.xelm import tfidf
from lsnmt.xelm.config import DENSE, XelmConfig
from lsnmt.xelm.icl_data import LANGUAGES, READERS, SPLITS, Example, Unavailable, obtain
from lsnmt.xelm.lmdata import load_meta, tokenizer
from lsnmt.xelm.perplexities import write_tsv
from lsnmt.xelm.score import mixture_logprobs, token_logprobs
from lsnmt.xelm.trainer import device_for, load_lm

log = logging.getLogger(__name__)


@dataclass
class Case:
    """One (task, language, shots, run): its examples and the token ids of every (example, candidate)."""

    task: str
    lang: str
    shots: int
    run: int
    examples: list[Example]
    seqs: list[np.ndarray] = field(default_factory=list)
    scored: list[int] = field(default_factory=list)
    """Candidate tokens at the end of each sequence."""
    models: dict[str, str] = field(default_factory=dict)
    """setting -> model name (``tfidf_ens`` -> ``"ensemble"``)."""
    weights: np.ndarray | None = None
    """``(examples, k)`` ensemble weights."""


def demonstrations(demos: list[Example], shots: int, seed: int, run: int) -> str:
    picked = random.Random(f"{seed}/{run}").sample(demos, shots)
    return "".join(d.shared + d.candidates[d.label] + "\n" for d in picked)


def encode(case: Case, context: str, sp, eos: int, block: int) -> None:
    for ex in case.examples:
        head = sp.encode(context + ex.shared)
        for cand in ex.candidates:
            tail = sp.encode(cand)
            seq = np.array([eos, *head, *tail], dtype=np.int64)[-(block + 1):]
            case.seqs.append(seq)
            case.scored.append(min(len(tail), len(seq) - 1))


def accuracy(case: Case, cand_scores: list[float]) -> float:
    i, correct = 0, 0
    for ex in case.examples:
        scores = cand_scores[i:i + len(ex.candidates)]
        correct += int(np.argmax(scores)) == ex.label
        i += len(ex.candidates)
    return correct / len(case.examples)


def _json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def build_cases(x: XelmConfig, dl: DownloadConfig, lm_dir: Path, cluster_dir: Path, status: dict[str, str]
                ) -> list[Case]:
    """Every case whose data is present; the reasons of what is absent go to ``status``."""
    cfg, meta, sp = x.icl, load_meta(lm_dir), tokenizer(lm_dir)
    main = x.experts.main_k
    ty = _json(cluster_dir / "typology" / f"k{main}.json")["expert_of"]
    tf = _json(cluster_dir / "tfidf" / f"k{main}" / "summary.json")["top1"]
    cases = []
    for task in cfg.tasks:
        try:
            root = obtain(task, Path(cfg.path), cfg.download, retries=dl.retries,
                          timeout=dl.timeout)
        except Unavailable as exc:
            status[task] = f"not run: {exc}"
            continue
        eval_split, demo_split = SPLITS[task]
        try:
            demos: list[Example] | None = READERS[task](root, "en", demo_split)
        except Unavailable as exc:
            demos, status[f"{task}/few-shot"] = None, f"not run: English demonstrations: {exc}"
        for lang in (x for x in LANGUAGES[task] if x in meta["languages"]):
            try:
                examples = READERS[task](root, lang, eval_split)
            except Unavailable as exc:
                status[f"{task}/{lang}"] = f"not run: {exc}"
                continue
            examples = random.Random(f"{cfg.seed}/{task}/{lang}").sample(examples, min(cfg.examples, len(examples)))
            models = {"seed": "seed", "dense": DENSE, "typology_trg": f"typology-k{main}-e{ty[lang]}",
                      "tfidf_top1": f"tfidf-k{main}-e{tf[lang]}", "tfidf_ens": "ensemble"}
            for shots in (0, cfg.shots) if demos else (0,):
                for run in range(1 if shots == 0 else cfg.runs):
                    case = Case(task, lang, shots, run, examples, models=dict(models))
                    if shots and "en" in ty:
                        case.models["typology_en"] = f"typology-k{main}-e{ty['en']}"
                    context = demonstrations(demos, shots, cfg.seed, run) if shots and demos else ""
                    encode(case, context, sp, meta["eos"], x.lm.block_size)
                    cases.append(case)
        status.setdefault(task, "ok")
    return cases


def score_cases(x: XelmConfig, experiment: str, cases: list[Case], lm_dir: Path, cluster_dir: Path
                ) -> dict[tuple, list[float]]:
    """``(case index, setting) -> mean candidate log-probability`` for every (example, candidate)."""
    main, meta, device = x.experts.main_k, load_meta(lm_dir), device_for(x.threads)
    experts = [f"tfidf-k{main}-e{e}" for e in range(main)]
    emb = tfidf.load_embedder(cluster_dir / "tfidf")
    centroids = np.load(cluster_dir / "tfidf" / f"k{main}" / "centroids.npy")
    for case in cases:
        phi = tfidf.embed(emb, [" ".join(ex.fields) for ex in case.examples])
        case.weights = tfidf.ensemble_weights(phi, centroids, x.ensemble.temperature)
    needed = sorted({m for c in cases for m in c.models.values() if m != "ensemble"} | set(experts))
    token_lp: dict[tuple[int, str], list[np.ndarray]] = {}
    for name in needed:
        path = P.at(P.SEED, experiment) / "model.pt" if name == "seed" else \
            P.at(P.EXPERT, experiment, expert=name) / "model.pt"
        model = load_lm(path, device)
        for i, case in enumerate(cases):
            if name in case.models.values() or name in experts:
                lps = token_logprobs(model, case.seqs, block=x.lm.block_size, pad=meta["pad"], device=device)
                token_lp[(i, name)] = [lp[len(lp) - n:] for lp, n in zip(lps, case.scored, strict=True)]
        log.info("icl: scored %s", name)
    out: dict[tuple, list[float]] = {}
    for i, case in enumerate(cases):
        for setting, name in case.models.items():
            if name == "ensemble":
                per_cand = _mixed(case, [token_lp[(i, e)] for e in experts])
            else:
                per_cand = token_lp[(i, name)]
            out[(i, setting)] = [float(np.mean(x)) for x in per_cand]
    return out


def _mixed(case: Case, expert_lps: list[list[np.ndarray]]) -> list[np.ndarray]:
    assert case.weights is not None
    out, j = [], 0
    for n_ex, ex in enumerate(case.examples):
        for _ in ex.candidates:
            lp = np.stack([e[j] for e in expert_lps], axis=1)  # (tokens, k)
            out.append(mixture_logprobs(np.repeat(case.weights[n_ex:n_ex + 1], len(lp), axis=0), lp))
            j += 1
    return out


def run_icl(x: XelmConfig, dl: DownloadConfig, experiment: str, lm_dir: Path, cluster_dir: Path, out: Path) -> dict:
    """Evaluate every available task of ``x.icl`` (``dl``: how to download a dataset) with ``experiment``'s models;
    write ``results.tsv`` and ``summary.json`` into ``out`` atomically."""
    status: dict[str, str] = {}
    cases = build_cases(x, dl, lm_dir, cluster_dir, status)
    scores = score_cases(x, experiment, cases, lm_dir, cluster_dir) if cases else {}
    acc: dict[tuple[str, int, str, str], list[float]] = {}
    for i, case in enumerate(cases):
        for setting in case.models:
            acc.setdefault((case.task, case.shots, setting, case.lang), []).append(accuracy(case, scores[(i, setting)]))
    rows = [[t, s, st, lang, 100 * float(np.mean(v)), len(v)] for (t, s, st, lang), v in sorted(acc.items())]
    summary = {"status": status, "main_k": x.experts.main_k, "table3": table3(rows)}
    with atomic_dir(out) as tmp:
        write_tsv(tmp / "results.tsv", ["task", "shots", "setting", "lang", "accuracy", "runs"], rows)
        write_json(tmp / "summary.json", summary)
    return summary


def table3(rows: list[list]) -> dict[str, dict[str, dict[str, float]]]:
    """``task@shots -> setting -> {accuracy: mean over languages, win_rate: % of languages where it is best}``."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    groups: dict[tuple[str, int], dict[str, dict[str, float]]] = {}
    for task, shots, setting, lang, accuracy_, _ in rows:
        groups.setdefault((task, shots), {}).setdefault(setting, {})[lang] = accuracy_
    for (task, shots), settings in groups.items():
        langs = sorted({x for v in settings.values() for x in v})
        best = {x: max(v[x] for v in settings.values() if x in v) for x in langs}
        out[f"{task}@{shots}"] = {
            s: {"accuracy": float(np.mean(list(v.values()))),
                "win_rate": 100 * sum(v.get(x) == best[x] for x in langs) / len(langs)}
            for s, v in settings.items()}
    return out
