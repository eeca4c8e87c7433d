"""x-elm's decoder-only LM learns, and its TF-IDF ensemble is no worse than its best expert (x-elm Sec. 3).

Documents: the synthetic task's four lexicons (:mod:`lsnmt.data.synthetic`) over one shared concept grammar, a
Markov chain in which every concept has two equally likely successors, so a perfect model has a perplexity of
about 2 per word, against :attr:`Task.vocab_size` (56) for a uniform one. The real trainer
(``lsnmt.xelm.trainer.train_lm``) trains a dense seed on all four languages, then branches two experts from it
(x-BTM Step 1-2) on the clusters {en, de} and {fr, ru}. Scored with ``lsnmt.xelm.score`` on held-out documents;
the ensemble weights are the evaluation's, ``alpha_e ∝ exp(-||phi(x_<t) - c_e||^2 / T)`` over TF-IDF embeddings of
each prefix (``lsnmt.xelm.tfidf``, Sec. 3.3), mixed by ``mixture_logprobs``.

Asserted: the dense model's perplexity is far below uniform (< 1/8 of it); on each expert's own cluster the
ensemble's perplexity is within 5 % of its best member's (the first word of every document has an empty prefix
and so uniform weights: on 15-30-word documents that costs up to ~3 %) and well below the other expert's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lsnmt.data.shards import ShardWriter
from lsnmt.data.synthetic import Task
from lsnmt.io import write_json
from lsnmt.xelm import tfidf
from lsnmt.xelm.config import LMConfig, LMTrainConfig, TfidfConfig
from lsnmt.xelm.corpus import Selection, shard, valid_docs
from lsnmt.xelm.score import doc_sequences, mixture_logprobs, perplexity, token_logprobs
from lsnmt.xelm.trainer import LMJob, load_lm, train_lm

LANGS = ("en", "de", "fr", "ru")
CLUSTERS = (("en", "de"), ("fr", "ru"))
LM = LMConfig(embed_dim=64, ffn_dim=128, heads=4, layers=2, dropout=0.0, block_size=64)
SEED = LMTrainConfig(updates=150, batch_tokens=1024, lr=3e-3, warmup_updates=20, log_every=50, save_every=150)
EXPERT = LMTrainConfig(updates=60, batch_tokens=1024, lr=1e-3, warmup_updates=5, log_every=30, save_every=60)
TEMPERATURE = 0.1


def markov_docs(task: Task, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """Concept sequences of 15-30 words: c_{i+1} is c_i + 1 or c_i + 3 (mod C), equally likely."""
    docs = []
    for _ in range(n):
        c = [int(rng.integers(task.concepts))]
        for _ in range(int(rng.integers(14, 30))):
            c.append((c[-1] + (1 if rng.random() < 0.5 else 3)) % task.concepts)
        docs.append(np.array(c))
    return docs


def write_lm_dir(task: Task, root: Path) -> Path:
    """``root/lm`` as the ``lm_data`` stage lays it out: token shards per split and language, ``meta.json``."""
    rng = np.random.default_rng(3)
    meta: dict = {**task.meta(), "targets": [], "docs": {"train": {}, "valid": {}},
                  "tokens": {"train": {}, "valid": {}}}
    for lang in LANGS:
        for split, n in (("train", 400), ("valid", 40)):
            rows = [task.lexicons[LANGS.index(lang)][c].tolist() for c in markov_docs(task, n, rng)]
            (root / split).mkdir(parents=True, exist_ok=True)
            w = ShardWriter(root / split / lang, task.vocab_size)
            w.add_many(rows)
            w.close()
            meta["docs"][split][lang], meta["tokens"][split][lang] = n, int(sum(map(len, rows)))
    write_json(root / "meta.json", meta)
    return root


def words(ids: list[int]) -> str:
    return " ".join(f"w{t}" for t in ids)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, dict[str, Path]]:
    root = tmp_path_factory.mktemp("xelm")
    task = Task(languages=LANGS, concepts=12)
    lm_dir = write_lm_dir(task, root / "lm")
    meta = {**task.meta(), "tokens": {"train": {}}}
    seed = train_lm(LMJob("seed", SEED, SEED.batch_tokens, Selection.languages(lm_dir, LANGS)), LM, lm_dir, meta,
                    root / "work/seed", root / "out/seed")
    assert seed["updates"] == SEED.updates
    models = {"dense": root / "out/seed/model.pt"}
    for e, langs in enumerate(CLUSTERS):
        job = LMJob(f"e{e}", EXPERT, EXPERT.batch_tokens, Selection.languages(lm_dir, langs), init=models["dense"])
        train_lm(job, LM, lm_dir, meta, root / f"work/e{e}", root / f"out/e{e}")
        models[f"e{e}"] = root / f"out/e{e}/model.pt"
    return lm_dir, task.meta(), models


def test_lm_perplexity_far_below_uniform(trained: tuple[Path, dict, dict[str, Path]]) -> None:
    lm_dir, meta, models = trained
    model = load_lm(models["dense"])
    for lang in LANGS:
        seqs = doc_sequences(valid_docs(lm_dir, lang, meta["vocab_size"]), meta["eos"])
        ppl = perplexity(np.concatenate(token_logprobs(model, seqs, block=LM.block_size, pad=meta["pad"])))
        print(f"dense {lang}: perplexity {ppl:.2f} (uniform {meta['vocab_size']})")
        assert ppl < meta["vocab_size"] / 8, f"{lang}: perplexity {ppl:.1f} is not far below uniform"


def test_ensemble_no_worse_than_its_best_expert(trained: tuple[Path, dict, dict[str, Path]]) -> None:
    lm_dir, meta, models = trained
    train_texts = {x: [words(s[i].tolist()) for i in range(len(s))]
                   for x in LANGS for s in [shard(lm_dir, "train", x, meta["vocab_size"])]}
    cfg = TfidfConfig(max_features=1000, svd_dim=16)
    emb = tfidf.fit_embedder(cfg, [t for x in LANGS for t in train_texts[x]])
    centroids = np.stack([tfidf.embed(emb, [t for x in langs for t in train_texts[x]]).mean(0) for langs in CLUSTERS])
    experts = [load_lm(models[f"e{e}"]) for e in range(len(CLUSTERS))]
    for e, langs in enumerate(CLUSTERS):
        docs = [d for x in langs for d in valid_docs(lm_dir, x, meta["vocab_size"])]
        seqs = doc_sequences(docs, meta["eos"])
        lps = np.stack([np.concatenate(token_logprobs(m, seqs, block=LM.block_size, pad=meta["pad"]))
                        for m in experts], axis=1)  # (positions, experts)
        prefixes = [words(d[:t].tolist()) for d in docs for t in range(len(d) + 1)]
        alpha = tfidf.ensemble_weights(tfidf.embed(emb, prefixes), centroids, TEMPERATURE)
        ens = perplexity(mixture_logprobs(alpha, lps))
        own, other = perplexity(lps[:, e]), perplexity(lps[:, 1 - e])
        print(f"cluster {langs}: ensemble {ens:.3f}, own expert {own:.3f}, other expert {other:.3f}")
        assert ens <= 1.05 * min(own, other), f"cluster {langs}: ensemble {ens:.3f} worse than expert {own:.3f}"
        assert ens < 0.9 * other, f"cluster {langs}: the ensemble does not prefer the cluster's own expert"
