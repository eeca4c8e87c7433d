"""The ``lm_data`` stage: each language's monolingual documents as text and as token shards.

Sources, per language ``l`` (the pretraining languages and the HMR targets):

* training documents: monolingual corpora (``prepared/mono/train/{corpus}.{l}``, mC4) and the ``l`` side of
  every prepared training direction into ``l`` (``prepared/train/{s}-{l}/{corpus}.tgt``: the untagged side;
  the default's Tatoeba pairs), exact repeats dropped (``lm_data.dedup``), at most ``max_train_docs``;
* validation documents: the first ``valid_docs`` lines of the monolingual validation file, or else of the first
  prepared validation direction into ``l`` (``prepared/valid/{s}-{l}.tgt``; the default's FLORES-200 dev).
  x-elm Sec. 5.4 scores the first 5,000 mC4 validation documents of each language.

Tokens come from XGLM's tokenizer with ``lm_data.init: xglm`` (``lsnmt/xelm/xglm.py``; x-elm keeps XGLM's), else
from the experiment's shared sentencepiece model (``data/{exp}/spm``) or, with
``lm_data.vocab_size``, from an LM tokenizer trained here by the ``spm`` stage's recipe (``lm/spm``) on the
pretraining languages only: like XGLM's, it never sees the HMR targets (x-elm Sec. 6.3's unseen languages); shards
follow :mod:`lsnmt.data.shards` (no EOS stored). ``meta.json`` records the special ids, documents, tokens and
bytes per language (``bytes``: the UTF-8 size of ``{split}/{lang}.txt``, one newline per document: x-elm Table 5's
corpus size) and the files each language was read from.
"""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

import sentencepiece as spm

from lsnmt.data.config import DataConfig, SpmConfig, SpmView
from lsnmt.data.dedup import Seen, chunks
from lsnmt.data.shards import ShardWriter
from lsnmt.data.spm import train_spm
from lsnmt.io import DataError, atomic_dir, iter_lines, write_json
from lsnmt.runner.progress import progress
from lsnmt.xelm import xglm
from lsnmt.xelm.data_config import LMDataConfig

log = logging.getLogger(__name__)

CHUNK = 10_000


def train_files(prepared: Path, lang: str) -> list[Path]:
    """Monolingual training files of ``lang``, then the target sides of its training directions."""
    mono = sorted((prepared / "mono" / "train").glob(f"*.{lang}"))
    bitext = sorted((prepared / "train").glob(f"*-{lang}/*.tgt"))
    return mono + bitext


def valid_file(prepared: Path, lang: str) -> Path | None:
    """The validation file of ``lang``: monolingual first, else the first direction into ``lang``."""
    found = sorted((prepared / "mono" / "valid").glob(f"*.{lang}")) + sorted((prepared / "valid").glob(f"*-{lang}.tgt"))
    return found[0] if found else None


def _documents(files: list[Path], dedup: bool) -> Iterator[str]:
    """The non-blank lines of ``files`` in order, exact repeats left out with ``dedup`` (8 bytes a document,
    :mod:`lsnmt.data.dedup`)."""
    seen = Seen() if dedup else None
    for path in files:
        for chunk in chunks(iter_lines(path)):
            lines = [line for line in chunk if line.strip()]
            if seen is not None and lines:
                lines = [x for x, r in zip(lines, seen.repeats(lines).tolist(), strict=True) if not r]
            yield from lines


def _write(docs: Iterator[str], sp: spm.SentencePieceProcessor | xglm.Tokenizer, prefix: Path) -> tuple[int, int]:
    """Write ``prefix.txt`` and the shard ``prefix.{bin,idx}``; return (documents, tokens)."""
    writer = ShardWriter(prefix, sp.get_piece_size())
    with open(prefix.with_suffix(".txt"), "w", encoding="utf-8", newline="\n") as fh:
        while chunk := list(islice(docs, CHUNK)):
            fh.writelines(d + "\n" for d in chunk)
            writer.add_many(sp.encode(chunk))
    writer.close()
    return len(writer), writer.tokens


def _seen_only(data: DataConfig, seen: tuple[str, ...]) -> DataConfig:
    """The experiment's data restricted to the pretraining languages (what the LM tokenizer is trained on)."""
    keep = set(seen) | {data.pivot}
    zero_shot = tuple(d for d in data.zero_shot if set(d.split("-")) <= keep)
    groups = {g: tuple(x for x in langs if x in keep) for g, langs in data.groups.items()}
    sources = tuple(dataclasses.replace(s, languages=tuple(x for x in s.languages if x in keep))
                    for s in data.sources if not s.languages or set(s.languages) & keep)
    return dataclasses.replace(data, languages=tuple(x for x in data.languages if x in keep),
                               zero_shot=zero_shot, groups=groups, sources=sources,
                               no_eval=tuple(x for x in data.no_eval if x in keep))


def build_lm_data(data: DataConfig, spm_cfg: SpmConfig, lm: LMDataConfig, prepared: Path, spm_dir: Path,
                  out: Path) -> dict:
    """Write ``data/{exp}/lm`` atomically, the ``lm`` section's languages of ``data``'s prepared text tokenised as
    ``lm`` says (``spm_cfg``: the shared tokenizer's recipe, for an LM tokenizer of its own); return ``meta.json``."""
    seen, targets = lm.seen(data.languages), lm.targets
    if lm.init == "xglm":
        with atomic_dir(out) as tmp:
            meta = _build(lm, seen, targets, xglm.load_tokenizer(lm.pretrained), prepared, tmp)
            meta["tokenizer"] = xglm.PREFIX + lm.pretrained
            write_json(tmp / "meta.json", meta)
        return meta
    with atomic_dir(out) as tmp:
        model = spm_dir / "spm.model"
        if lm.vocab_size is not None:
            own = dataclasses.replace(spm_cfg, vocab_size=lm.vocab_size, sentences_per_language=lm.spm_sentences)
            train_spm(SpmView(data=_seen_only(data, seen), spm=own), prepared, tmp / "spm")
            model = tmp / "spm" / "spm.model"
        meta = _build(lm, seen, targets, spm.SentencePieceProcessor(model_file=str(model)), prepared, tmp)
        meta["tokenizer"] = "lm/spm/spm.model" if lm.vocab_size is not None else "spm/spm.model"
        write_json(tmp / "meta.json", meta)
    return meta


def _build(lm: LMDataConfig, seen: tuple[str, ...], targets: tuple[str, ...],
           sp: spm.SentencePieceProcessor | xglm.Tokenizer, prepared: Path, tmp: Path) -> dict:
    meta: dict = {"languages": list(seen), "targets": list(targets), "vocab_size": sp.get_piece_size(),
                  "bos": sp.bos_id(), "pad": sp.pad_id(), "eos": sp.eos_id(), "unk": sp.unk_id(),
                  "docs": {"train": {}, "valid": {}}, "tokens": {"train": {}, "valid": {}},
                  "bytes": {"train": {}, "valid": {}},
                  "files": {"train": {}, "valid": {}}}
    for split in ("train", "valid"):
        (tmp / split).mkdir()
    for lang in progress((*seen, *targets), "lm_data", unit="language"):
        files = train_files(prepared, lang)
        if not files:
            raise DataError(f"no training text for language {lang!r} in {prepared}")
        n, t = _write(islice(_documents(files, lm.dedup), lm.max_train_docs), sp, tmp / "train" / lang)
        vf = valid_file(prepared, lang)
        if vf is None:
            raise DataError(f"no validation text for language {lang!r} in {prepared}")
        vn, vt = _write(islice(_documents([vf], False), lm.valid_docs), sp, tmp / "valid" / lang)
        if n == 0 or vn == 0:
            raise DataError(f"language {lang!r}: {n} training and {vn} validation documents after filtering")
        for split, (docs_n, tok_n, src) in (("train", (n, t, files)), ("valid", (vn, vt, [vf]))):
            meta["docs"][split][lang], meta["tokens"][split][lang] = docs_n, tok_n
            meta["bytes"][split][lang] = (tmp / split / f"{lang}.txt").stat().st_size
            meta["files"][split][lang] = [str(p.relative_to(prepared)) for p in src]
        log.info("lm_data %s: %d train documents (%d tokens), %d valid (%d tokens)", lang, n, t, vn, vt)
    return meta


def tokenizer(lm_dir: Path) -> spm.SentencePieceProcessor | xglm.Tokenizer:
    """The tokenizer the LM data was encoded with (a sentencepiece model, or XGLM's)."""
    meta = load_meta(lm_dir)
    if meta["tokenizer"].startswith(xglm.PREFIX):
        return xglm.load_tokenizer(meta["tokenizer"].removeprefix(xglm.PREFIX))
    path = lm_dir / "spm" / "spm.model" if meta["tokenizer"].startswith("lm/") else lm_dir.parent / "spm" / "spm.model"
    return spm.SentencePieceProcessor(model_file=str(path))


def load_meta(lm_dir: Path) -> dict:
    path = lm_dir / "meta.json"
    if not path.is_file():
        raise DataError(f"{path}: not found (run the lm_data stage first)")
    return json.loads(path.read_text(encoding="utf-8"))
