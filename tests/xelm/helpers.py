"""A tiny ``data/{exp}/lm`` folder of synthetic token documents and an x-elm config for the trainer tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from lsnmt.data.shards import ShardWriter
from lsnmt.experiment.params import Experiment
from lsnmt.io import write_json
from lsnmt.typed import build
from lsnmt.xelm.config import LMConfig, LMTrainConfig

VOCAB, PAD, EOS = 40, 1, 2
LM = LMConfig(embed_dim=16, ffn_dim=32, heads=2, layers=2, dropout=0.1, block_size=8)


def train_cfg(**overrides: object) -> LMTrainConfig:
    base: dict[str, object] = dict(updates=6, batch_tokens=32, lr=0.003, warmup_updates=2, log_every=2,
                                   save_every=2)
    base.update(overrides)
    return LMTrainConfig(**base)  # type: ignore[arg-type]


def make_lm_dir(root: Path, langs: tuple[str, ...] = ("en", "de"), targets: tuple[str, ...] = ("sw",),
                docs: int = 30, seed: int = 0) -> Path:
    """``root/lm`` with ``docs`` random documents per language (token ids 4 … VOCAB-1, a range per language)."""
    rng = np.random.default_rng(seed)
    lm = root / "lm"
    meta: dict = {"languages": list(langs), "targets": list(targets), "vocab_size": VOCAB, "pad": PAD, "eos": EOS,
                  "bos": 0, "unk": 3, "docs": {"train": {}, "valid": {}}, "tokens": {"train": {}, "valid": {}},
                  "tokenizer": "spm/spm.model"}
    for i, lang in enumerate((*langs, *targets)):
        for split, n in (("train", docs), ("valid", 4)):
            (lm / split).mkdir(parents=True, exist_ok=True)
            lo = 4 + 10 * (i % 3)
            sents = [rng.integers(lo, lo + 12, size=int(rng.integers(3, 12))).tolist() for _ in range(n)]
            w = ShardWriter(lm / split / lang, VOCAB)
            w.add_many(sents)
            w.close()
            (lm / split / f"{lang}.txt").write_text("".join(" ".join(map(str, s)) + "\n" for s in sents))
            meta["docs"][split][lang], meta["tokens"][split][lang] = n, int(sum(map(len, sents)))
    write_json(lm / "meta.json", meta)
    return lm


LM_DATA = ("languages", "targets", "init", "pretrained", "valid_docs", "max_train_docs", "dedup", "vocab_size",
           "spm_sentences")
"""Keys of the ``lm_data`` section (:class:`lsnmt.xelm.config.LMDataConfig`)."""


def experiment(**keys: object) -> Experiment:
    """Experiment ``t`` on en, de (+ sw, the HMR target) with tiny x-elm sections (``keys`` overrides keys of
    ``lm_data`` or ``xelm``, whichever holds them)."""
    train = {"updates": 6, "batch_tokens": 32, "lr": 0.003, "warmup_updates": 2, "log_every": 2, "save_every": 2}
    lm_data: dict[str, object] = {"languages": ["en", "de"], "targets": ["sw"], "vocab_size": 300}
    section = {"lm": {"embed_dim": 16, "ffn_dim": 32, "heads": 2, "layers": 2, "block_size": 8},
               "seed": train, "experts": {**train, "k": [2], "main_k": 2, "updates": 4},
               "ensemble": {"top_m": [1]}, "hmr": {**train, "updates": 4}}
    for key, value in keys.items():
        (lm_data if key in LM_DATA else section)[key] = value
    raw = {"name": "t", "data": {"languages": ["en", "de", "sw"], "train_directions": "none",
                                 "eval_directions": "none", "sources": [{"name": "m", "kind": "local", "path": "x"}]},
           "lm_data": {k: v for k, v in lm_data.items() if v is not None}, "xelm": section}
    return build(Experiment, raw, "experiments.t")


def make_clusters(root: Path, lm: Path) -> Path:
    """A cluster folder for en / de with k = 2: typology one language each, TF-IDF by document parity; sw <- de."""
    out = root / "cluster"
    (out / "typology").mkdir(parents=True)
    (out / "tfidf" / "k2").mkdir(parents=True)
    write_json(out / "typology" / "k2.json", {"k": 2, "clusters": [["en"], ["de"]], "expert_of": {"en": 0, "de": 1}})
    write_json(out / "donors.json", {"sw": {"donor": "de", "distance": 0.1, "source": "test"}})
    import json

    docs = json.loads((lm / "meta.json").read_text())["docs"]["train"]
    write_json(out / "docs.json", {"languages": ["en", "de"], "docs": {x: docs[x] for x in ("en", "de")}})
    np.save(out / "tfidf" / "k2" / "assign.npy", (np.arange(docs["en"] + docs["de"]) % 2).astype(np.int32))
    return out
