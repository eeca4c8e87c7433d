"""The ``encode`` stage: text to token-id shards, one job per file, in parallel.

Inputs are the sampled training data (with ``sampling.json``, copied beside ``meta.json`` for the trainer's
per-epoch draw) and the prepared valid / test / held-out test (``test.{corpus}``) /
multi-way splits; outputs follow :mod:`lsnmt.data.layout`. ``meta.json``
records the vocabulary, the special ids and, per shard, sentences and tokens.
"""

from __future__ import annotations

import json
import logging
import multiprocessing as mp
import shutil
from pathlib import Path

import sentencepiece as spm

from lsnmt.data.config import EncodeView
from lsnmt.data.shards import ShardWriter
from lsnmt.io import atomic_dir, iter_lines, write_json
from lsnmt.runner.progress import progress

log = logging.getLogger(__name__)

CHUNK = 10_000


def split_tags(line: str, symbols: dict[str, int]) -> tuple[list[int], str, list[int]]:
    """Peel whole tag tokens off both ends of a line: (head ids, text, tail ids).

    Tags are mapped straight to their ids so that sentencepiece does not add a
    word-boundary piece in front of each of them.
    """
    tokens = line.split(" ")
    i, j = 0, len(tokens)
    while i < j and tokens[i] in symbols:
        i += 1
    while j > i and tokens[j - 1] in symbols:
        j -= 1
    return [symbols[t] for t in tokens[:i]], " ".join(tokens[i:j]), [symbols[t] for t in tokens[j:]]


def encode_lines(sp: spm.SentencePieceProcessor, lines: list[str], symbols: dict[str, int]) -> list[list[int]]:
    parts = [split_tags(line, symbols) for line in lines]
    bodies = sp.encode([text for _, text, _ in parts])
    return [head + body + tail for (head, _, tail), body in zip(parts, bodies, strict=True)]


def encode_file(job: tuple[str, str, str, dict[str, int]]) -> tuple[str, int, int]:
    """Encode one text file into the shard ``prefix``; return (prefix, sentences, tokens)."""
    model, text, prefix, symbols = job
    sp = spm.SentencePieceProcessor(model_file=model)
    writer, chunk = ShardWriter(prefix, sp.get_piece_size()), []
    for line in iter_lines(text):
        chunk.append(line)
        if len(chunk) == CHUNK:
            writer.add_many(encode_lines(sp, chunk, symbols))
            chunk = []
    writer.add_many(encode_lines(sp, chunk, symbols))
    writer.close()
    return prefix, len(writer), writer.tokens


def jobs(view: EncodeView, sampled: Path, prepared: Path, out: Path) -> list[tuple[Path, Path]]:
    """(text file, shard prefix) for every file the stage encodes."""
    todo = []
    for s, t in view.data.train_pairs:
        for side in ("src", "tgt"):
            todo.append((sampled / "train" / f"{s}-{t}.{side}", out / "train" / f"{s}-{t}.{side}"))
    splits = {"valid": view.data.eval_pairs, **view.data.test_sets} if view.data.eval_pairs else view.data.test_sets
    for split, pairs in splits.items():
        for s, t in pairs:
            for side in ("src", "tgt"):
                todo.append((prepared / split / f"{s}-{t}.{side}", out / split / f"{s}-{t}.{side}"))
    for f in sorted((prepared / "multiway").glob("*")):
        todo.append((f, out / "multiway" / f.name))
    return todo


def encode(view: EncodeView, spm_dir: Path, sampled: Path, prepared: Path, out: Path) -> dict:
    """Encode everything into ``out`` atomically, ``view.encode.workers`` files at a time."""
    model = spm_dir / "spm.model"
    sp = spm.SentencePieceProcessor(model_file=str(model))
    names = json.loads((spm_dir / "symbols.json").read_text(encoding="utf-8"))["symbols"]
    symbols = {name: sp.piece_to_id(name) for name in names}
    with atomic_dir(out) as tmp:
        todo = [(str(model), str(text), str(tmp / prefix.relative_to(out)), symbols) for text, prefix in
                jobs(view, sampled, prepared, out)]
        for _, _, prefix, _ in todo:
            Path(prefix).parent.mkdir(parents=True, exist_ok=True)
        workers = max(1, min(view.encode.workers, len(todo)))
        shards = {}
        ctx = mp.get_context("spawn")
        with ctx.Pool(workers) as pool:
            for prefix, n, tokens in progress(pool.imap_unordered(encode_file, todo), "encode",
                                              total=len(todo), unit="file"):
                shards[str(Path(prefix).relative_to(tmp))] = {"sentences": n, "tokens": tokens}
        meta = {"vocab_size": sp.get_piece_size(), "bos": sp.bos_id(), "pad": sp.pad_id(), "eos": sp.eos_id(),
                "unk": sp.unk_id(), "languages": list(view.data.languages), "shards": dict(sorted(shards.items()))}
        write_json(tmp / "meta.json", meta)
        if (sampled / "sampling.json").is_file():  # the trainer's per-epoch draw (lsnmt.data.sample.epoch_draw)
            shutil.copyfile(sampled / "sampling.json", tmp / "sampling.json")
    log.info("encode: %d shards, %d tokens", len(shards), sum(v["tokens"] for v in shards.values()))
    return meta
