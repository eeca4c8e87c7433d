"""``mc4``: monolingual mC4 text (Xue et al., 2021) from AllenAI's release on the Hugging Face hub (x-elm).

Shards ``multilingual/c4-{code}.tfrecord-{i:05d}-of-{n:05d}.json.gz`` (train) and
``c4-{code}-validation.tfrecord-…`` (validation) of the ``allenai/c4`` dataset
repository, pinned at revision 1ddc9171… as in the ``mc4`` loading script whose
shard counts ``SHARDS`` copies (the languages of x-elm Table 5; mC4 writes Hebrew
as ``iw``). One JSON object per line; its ``text`` becomes one line of
``{split}/{name}/mw.{lang}`` with ``\\r``/``\\n`` inside the document replaced by
spaces. ``train`` <- train shards, ``valid`` and ``test`` <- validation shards
(x-elm reports perplexity on the first 5,000 validation documents: give the
validation split a source of its own with ``max_pairs: 5000``, so that the cap
does not also cut the training text). Shards are fetched in order only until
``max_pairs`` documents are written; ``shards: {en: 1024}`` reads at most the
first 1,024 training shards of a language (x-elm Sec. 5.1 / Table 5: EN, ES, FR,
RU "downsampled to 1,024 shards"); without either, every shard is downloaded
(terabytes for the large languages). :func:`plan` lists the shards a source
reads without fetching anything. No checksums are published per shard; each shard's
observed sha256 is recorded. ``path:`` may name a directory with the shard files
(e.g. a git-lfs checkout of ``multilingual/``); ``mirror:`` replaces the base URL.
The files are not aligned across languages (``Source.monolingual``).
"""

from __future__ import annotations

import gzip
import json
import logging
from collections.abc import Iterator
from pathlib import Path

from lsnmt.data.config import SourceConfig
from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.data.sources.base import Context, Remote, Source
from lsnmt.io import DataError

log = logging.getLogger(__name__)

BASE = "https://huggingface.co/datasets/allenai/c4/resolve/1ddc917116b730e1859edef32896ec5c16be51d0/multilingual"
MC4_CODES = {"he": "iw"}
SHARDS: dict[str, tuple[int, int]] = {
    "ar": (1024, 4), "az": (256, 1), "bg": (1024, 1), "de": (2048, 16), "el": (1024, 2), "en": (11264, 128),
    "es": (2048, 16), "fr": (2048, 16), "hi": (1024, 2), "iw": (1024, 1), "ja": (1024, 8), "ko": (1024, 1),
    "pl": (1024, 4), "ru": (4096, 32), "sv": (1024, 2), "sw": (32, 1), "tr": (1024, 4), "ur": (128, 1),
    "vi": (1024, 4), "zh": (1024, 2),
}
"""mC4 code -> (train shards, validation shards)."""


def shard_url(code: str, split: str, index: int) -> str:
    train, valid = SHARDS[code]
    suffix, n = ("", train) if split == "train" else ("-validation", valid)
    return f"{BASE}/c4-{code}{suffix}.tfrecord-{index:05d}-of-{n:05d}.json.gz"


def documents(path: Path) -> Iterator[bytes]:
    """The ``text`` of each JSON line of a gzipped shard, as one line of UTF-8."""
    with gzip.open(path, "rb") as fh:
        for n, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                text = json.loads(raw)["text"]
            except (ValueError, KeyError, TypeError) as exc:
                raise DataError(f"{path}:{n}: not an mC4 JSON line ({exc})") from None
            yield text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").encode("utf-8", "replace")


def shard_count(src: SourceConfig, split: str, lang: str) -> int:
    """Shards of ``lang`` the source may read for ``split``: all, or the first ``shards[lang]`` training ones."""
    code = MC4_CODES.get(lang, lang)
    train, valid = SHARDS[code]
    if split != "train":
        return valid
    cap = src.shards.get(lang)
    if cap is not None and cap < 1:
        raise DataError(f"source {src.name!r}: shards.{lang} must be >= 1, got {cap}")
    return train if cap is None else min(cap, train)


def plan(src: SourceConfig, languages: tuple[str, ...]) -> dict[tuple[str, str], list[str]]:
    """``(split, lang) -> shard URLs`` the source reads at most (fewer when ``max_pairs`` documents come first)."""
    return {(split, lang): [shard_url(MC4_CODES.get(lang, lang), split, i)
                            for i in range(shard_count(src, split, lang))]
            for split in src.splits for lang in (src.languages or languages)
            if MC4_CODES.get(lang, lang) in SHARDS and split != "multiway"}


def build(ctx: Context) -> None:
    unknown = sorted(set(ctx.src.shards) - set(ctx.languages))
    if unknown:
        raise DataError(f"source {ctx.src.name!r}: shards: names {unknown[0]!r}, not one of its languages")
    if ctx.src.max_pairs is None:
        uncapped = [x for x in ctx.languages if x not in ctx.src.shards] if "train" in ctx.splits else ctx.languages
        if uncapped:
            log.warning("%s: no max_pairs set, every mC4 shard of %s is downloaded", ctx.src.name, ", ".join(uncapped))
    for split in ctx.splits:
        if split == "multiway":
            raise DataError(f"{ctx.src.name}: mC4 is monolingual text, it has no multiway split")
        for lang in ctx.languages:
            code = MC4_CODES.get(lang, lang)
            if code not in SHARDS:
                ctx.missing(split, f"{lang} (no shard count known for mC4 code {code!r})")
                continue
            _language(ctx, split, lang, code)


def _language(ctx: Context, split: str, lang: str, code: str) -> None:
    out = ctx.multiway(split, lang)
    for index in range(shard_count(ctx.src, split, lang)):
        if ctx.remaining(out) == 0:
            return
        remote = Remote(shard_url(code, split, index))
        shard, origin = ctx.obtain(remote)
        if shard.is_dir():
            raise DataError(f"{shard} (path: of source {ctx.src.name!r}) has no mC4 shard {remote.name}")
        ctx.append(out, documents(shard), origin)


SOURCE = Source(kind="mc4", summary="mC4 monolingual documents (allenai/c4 multilingual shards)",
                splits=SOURCE_SPLITS["mc4"], build=build, monolingual=True)
