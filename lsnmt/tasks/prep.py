"""The ``task_prep`` stage: each task's dataset, fetched, -> tokenizer and sub-word features, per task and language.

Fetches the dataset of every task of the ``tasks`` list into ``data/{exp}/task_raw/tasks/{task}``, with its
manifest (:func:`lsnmt.data.download.download_tasks`: ``download`` reads no task setting), and writes
``data/{exp}/tasks/{task}/``::

    tokenizer.json                       the task's tokenizer (lsnmt.tasks.tokenizer)
    {train,valid,test}/{lang}.jsonl      one feature per line (lsnmt.tasks.features); QA: one per window
    test/{lang}.gold.json                QA: {qid: {"answers": [...], "context": ...}} for decoding and scoring
    meta.json                            kind, languages, labels, counts, sha256 of every file above

The whole directory is swapped in atomically. Nothing here imports torch's model code: the stage is quick.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsnmt.data.config import DownloadConfig
from lsnmt.data.download import download_tasks
from lsnmt.data.layout import raw_task_dir
from lsnmt.io import DataError, atomic_dir, write_json
from lsnmt.runner.progress import progress
from lsnmt.tasks.config import TaskConfig
from lsnmt.tasks.data import NER_LABELS, NER_SPLITS, QA_FILES, Question, Sentence, read_tydiqa, read_wikiann
from lsnmt.tasks.features import ner_feature, qa_features
from lsnmt.tasks.tokenizer import pretrained_tokenizer, train_tokenizer

log = logging.getLogger(__name__)

def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n")


def _tokenizer(task: TaskConfig, texts: list[str]) -> Any:
    if task.encoder.init == "pretrained":
        return pretrained_tokenizer(task.encoder.name)
    return train_tokenizer(texts, task.encoder.vocab_size)


def prep_ner(task: TaskConfig, raw: Path, out: Path) -> dict[str, Any]:
    data: dict[str, dict[str, list[Sentence]]] = {}
    untagged: dict[str, int] = {}
    for split, fname in NER_SPLITS.items():
        data[split] = {}
        for lang in task.languages:
            path = raw / lang / fname
            if not path.is_file():
                raise DataError(f"{path}: missing (WikiANN {lang} {fname}); run the download stage")
            sents, n = read_wikiann(path)
            if split == "train" and task.max_train_per_language is not None:
                sents = sents[: task.max_train_per_language]
            data[split][lang], untagged[f"{split}/{lang}"] = sents, n
    tok = _tokenizer(task, [" ".join(s.words) for sents in data["train"].values() for s in sents])
    counts: dict[str, dict[str, int]] = {}
    cut = 0
    for split, by_lang in data.items():
        counts[split] = {}
        for lang, sents in progress(by_lang.items(), f"ner {split}", unit="language"):
            rows = [ner_feature(tok, s, task.max_length) for s in sents]
            cut += sum(f == -1 for r in rows for f in r["first"])
            _write_jsonl(out / split / f"{lang}.jsonl", rows)
            counts[split][lang] = len(rows)
    if cut:
        log.warning("%d words lie past max_length %d: predicted O, scored against their gold tags", cut,
                    task.max_length)
    tok.save(str(out / "tokenizer.json"))
    return {"labels": list(NER_LABELS), "counts": counts, "untagged_lines": {k: v for k, v in untagged.items() if v},
            "words_past_max_length": cut, "vocab_size": tok.get_vocab_size()}


def prep_qa(task: TaskConfig, raw: Path, out: Path) -> dict[str, Any]:
    data: dict[str, dict[str, list[Question]]] = {}
    for split, fname in QA_FILES.items():
        path = raw / fname
        if not path.is_file():
            raise DataError(f"{path}: missing (TyDiQA-GoldP {fname}); run the download stage")
        data[split] = read_tydiqa(path, task.languages)
        for lang, qs in data[split].items():
            if not qs:
                raise DataError(f"{path}: no {lang} question (ids {task.languages} -> TyDiQA prefixes)")
    if task.max_train_per_language is not None:
        data["train"] = {lang: qs[: task.max_train_per_language] for lang, qs in data["train"].items()}
    texts = list(dict.fromkeys(t for qs in data["train"].values() for q in qs for t in (q.context, q.question)))
    tok = _tokenizer(task, texts)
    counts: dict[str, dict[str, dict[str, int]]] = {}
    for split, by_lang in data.items():
        counts[split] = {}
        for lang, qs in progress(by_lang.items(), f"qa {split}", unit="language"):
            train = split == "train"
            rows = [f for q in qs for f in qa_features(tok, q, max_length=task.max_length, doc_stride=task.doc_stride,
                                                      max_query_length=task.max_query_length, train=train)]
            _write_jsonl(out / split / f"{lang}.jsonl", rows)
            counts[split][lang] = {"questions": len(qs), "windows": len(rows)}
            if train:
                counts[split][lang]["answer_outside_window"] = sum(r["start"] == 0 for r in rows)
            else:
                gold = {q.qid: {"answers": [a for a, _ in q.answers], "context": q.context} for q in qs}
                write_json(out / split / f"{lang}.gold.json", gold)
    tok.save(str(out / "tokenizer.json"))
    return {"counts": counts, "vocab_size": tok.get_vocab_size()}


def _sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def prep_task(name: str, task: TaskConfig, raw: Path, out: Path) -> dict[str, Any]:
    """Tokenizer, features and ``meta.json`` of one task under ``out``; returns the meta."""
    out.mkdir(parents=True, exist_ok=True)
    body = prep_ner(task, raw, out) if task.kind == "ner" else prep_qa(task, raw, out)
    files = {p.relative_to(out).as_posix(): _sha256(p) for p in sorted(out.rglob("*")) if p.is_file()}
    meta = {"task": name, "kind": task.kind, "languages": list(task.languages), "max_length": task.max_length,
            "tokenizer": task.encoder.name if task.encoder.init == "pretrained" else "trained (unigram)",
            **body, "files": files}
    write_json(out / "meta.json", meta)
    return meta


def prep(task_cfg: Mapping[str, TaskConfig], tasks: tuple[str, ...], dl: DownloadConfig, raw_root: Path,
         out_root: Path) -> None:
    """Fetch every task of ``tasks`` (entries of ``task_cfg``) into ``raw_root`` (``dl``: how), then prepare each
    into ``out_root/{task}`` (both swapped in atomically)."""
    for name in tasks:
        if name not in task_cfg:
            raise DataError(f"task {name!r} is not defined under task_cfg (known: {', '.join(task_cfg) or 'none'})")
    download_tasks({name: (task_cfg[name].source, task_cfg[name].languages) for name in tasks}, dl, raw_root)
    with atomic_dir(out_root) as tmp:
        for name in tasks:
            meta = prep_task(name, task_cfg[name], raw_task_dir(raw_root, name), tmp / name)
            log.info("task %s (%s): %s, vocabulary %d", name, meta["kind"], json.dumps(meta["counts"]),
                     meta["vocab_size"])
        write_json(tmp / "tasks.json", {"tasks": list(tasks)})
