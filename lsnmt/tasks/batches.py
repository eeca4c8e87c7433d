"""A task's prepared data in memory (:class:`Prepared`), its epochs of homogeneous language batches and their
padding (``lsnmt.tasks.train`` trains on them, ``lsnmt.tasks.predict`` predicts)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import Tensor

from lsnmt.io import DataError
from lsnmt.tasks.features import IGNORE
from lsnmt.tasks.tokenizer import PAD

# -- prepared data --------------------------------------------------------------------------------------------


@dataclass
class Prepared:
    """``data/{exp}/tasks/{task}`` in memory: features per split and language, QA gold, meta."""

    root: Path
    meta: dict[str, Any]
    splits: dict[str, dict[str, list[dict[str, Any]]]]
    gold: dict[str, dict[str, Any]]
    """QA test: ``{lang: {qid: {"answers": [...], "context": ...}}}``."""

    @classmethod
    def load(cls, root: Path) -> Prepared:
        meta_path = root / "meta.json"
        if not meta_path.is_file():
            raise DataError(f"{meta_path}: missing; run the task_prep stage")
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        splits: dict[str, dict[str, list[dict[str, Any]]]] = {}
        gold: dict[str, dict[str, Any]] = {}
        for split in ("train", "valid", "test"):
            for lang in meta["languages"]:
                path = root / split / f"{lang}.jsonl"
                if path.is_file():
                    with open(path, encoding="utf-8") as fh:
                        splits.setdefault(split, {})[lang] = [json.loads(line) for line in fh]
                g = root / split / f"{lang}.gold.json"
                if split == "test" and g.is_file():
                    gold[lang] = json.loads(g.read_text(encoding="utf-8"))
        return cls(root, meta, splits, gold)

    @property
    def fingerprint(self) -> str:
        return hashlib.sha256((self.root / "meta.json").read_bytes()).hexdigest()


# -- batches --------------------------------------------------------------------------------------------------


def epoch_batches(
    train: dict[str, list[dict]], languages: list[str], batch_size: int, rng: np.random.Generator
) -> list[tuple[int, list[int]]]:
    """``(language id, example indices)`` of one epoch: each language shuffled and cut into batches of
    ``batch_size`` (the last one smaller), then all batches in a random order."""
    out: list[tuple[int, list[int]]] = []
    for lid, lang in enumerate(languages):
        order = rng.permutation(len(train.get(lang, []))).tolist()
        out += [(lid, order[i : i + batch_size]) for i in range(0, len(order), batch_size)]
    return [out[i] for i in rng.permutation(len(out)).tolist()]


def collate(rows: list[dict], device: torch.device) -> dict[str, Tensor]:
    """Pad ``ids`` (``<pad>``), ``labels`` (ignored) to the longest row; QA ``start``/``end`` targets."""
    width = max(len(r["ids"]) for r in rows)
    ids = torch.full((len(rows), width), PAD, dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r["ids"])] = torch.tensor(r["ids"])
    out = {"input_ids": ids, "attention_mask": ids.ne(PAD).long()}
    if "labels" in rows[0]:
        labels = torch.full((len(rows), width), IGNORE, dtype=torch.long)
        for i, r in enumerate(rows):
            labels[i, : len(r["labels"])] = torch.tensor(r["labels"])
        out["labels"] = labels
    if "start" in rows[0]:
        out["start"] = torch.tensor([r["start"] for r in rows])
        out["end"] = torch.tensor([r["end"] for r in rows])
    return {k: v.to(device) for k, v in out.items()}
