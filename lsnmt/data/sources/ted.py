"""``ted_multiway``: the TED talks corpus of Qi et al. (2018) as a multi-way set (CLM Sec. 5.2, App. A.2).

Source: http://phontron.com/data/ted_talks.tar.gz (neulab/word-embeddings-for-nmt; the
TFDS and HF ``ted_multi`` loaders read it) with ``all_talks_{train,dev,test}.tsv``: a
header ``talk_name`` + one column per language (``zh-cn``, ``pt-br``, ``fr-ca`` …; the
``TED_CODES`` map turns ``zh`` into ``zh-cn``), one sentence per row, text already
tokenized; a missing translation holds ``__NULL__`` or ``_ _ NULL _ _``. The rows in
which every selected language has a translation become aligned ``mw.{lang}`` lines:
``train`` <- train, ``valid`` <- dev, ``test`` and ``multiway`` <- test.

Unconfirmed: that CLM's 2,296-sentence set in 15 languages (ar cs de en es fr it ja ko
nl ro ru tr vi zh) is exactly this selection of the test file; and the URL itself — a
public record from 2025 says it now answers with an HTML page, which ``fetch`` refuses.
Point ``path:`` at a copy of the tarball, or at a directory holding the TSV files.
No checksum is published (the observed sha256 is recorded).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import BinaryIO

from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.data.sources.archive import members
from lsnmt.data.sources.base import Context, Remote, Source, strip_newlines
from lsnmt.io import DataError

REMOTE = Remote("http://phontron.com/data/ted_talks.tar.gz")
TSV = {"train": "all_talks_train.tsv", "valid": "all_talks_dev.tsv", "test": "all_talks_test.tsv",
       "multiway": "all_talks_test.tsv"}
TED_CODES = {"zh": "zh-cn"}
NULLS = (b"__NULL__", b"_ _ NULL _ _")


def complete(text: bytes) -> bool:
    """A real translation: not empty and not marked missing or incomplete."""
    return bool(text.strip()) and not any(null in text for null in NULLS)


def read_tsv(fh: BinaryIO, label: str) -> tuple[list[str], Iterator[list[bytes]]]:
    """Header and rows of a TED TSV, split on ``\\n`` and ``\\t`` only."""
    lines = strip_newlines(fh)
    header = next(lines, b"").decode("utf-8").rstrip("\r").split("\t")
    if "talk_name" not in header:
        raise DataError(f"{label}: no talk_name column in the header; not a TED talks TSV")

    def rows() -> Iterator[list[bytes]]:
        for n, line in enumerate(lines, start=2):
            cells = line.rstrip(b"\r").split(b"\t")
            if len(cells) != len(header):
                raise DataError(f"{label}:{n}: {len(cells)} columns, the header has {len(header)}")
            yield cells

    return header, rows()


def build(ctx: Context) -> None:
    by_file: dict[str, list[str]] = {}
    for split in ctx.splits:
        by_file.setdefault(TSV[split], []).append(split)
    archive, origin = ctx.obtain(REMOTE)
    for name, fh in members(archive, by_file):
        splits = by_file.pop(name)
        header, rows = read_tsv(fh, f"{origin.source}:{name}")
        cols = {lang: header.index(TED_CODES.get(lang, lang)) for lang in ctx.languages
                if TED_CODES.get(lang, lang) in header}
        for split in splits:
            for lang in set(ctx.languages) - cols.keys():
                ctx.missing(split, lang)
        kept = [row for row in rows if all(complete(row[i]) for i in cols.values())]
        for split in splits:
            for lang, i in cols.items():
                ctx.append(ctx.multiway(split, lang), (row[i] for row in kept), origin)
    if by_file:
        raise DataError(f"{origin.source} has no {sorted(by_file)[0]}")


SOURCE = Source(kind="ted_multiway", summary="TED talks (Qi et al., 2018), rows translated into every language",
                splits=SOURCE_SPLITS["ted_multiway"], build=build, remotes=(REMOTE,))
