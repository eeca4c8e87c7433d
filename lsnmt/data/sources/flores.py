"""``flores101`` / ``flores200``: the official FLORES multi-way dev (997) and devtest (1012) sets.

Written as ``mw.{lang}``: ``valid`` <- dev, ``test`` and ``multiway`` <- devtest.

* FLORES-200: https://dl.fbaipublicfiles.com/nllb/flores200_dataset.tar.gz, the target
  of https://tinyurl.com/flores200dataset given in facebookresearch/flores' README.
  Members ``flores200_dataset/{dev,devtest}/{code}.{dev,devtest}`` with FLORES-200
  codes (``eng_Latn``). sha256 ``b8b0b767…44011f6`` (25,585,843 bytes): not published by
  Meta; it is the value recorded independently by many projects and by a Croissant
  metadata record of the dataset, so it is pinned here.
* FLORES-101: https://dl.fbaipublicfiles.com/flores101/dataset/flores101_dataset.tar.gz
  (facebookresearch/flores, previous_releases/flores101/README.md). Members
  ``flores101_dataset/{dev,devtest}/{code}.{dev,devtest}`` with FLORES-101 codes: the
  language part of the FLORES-200 code except where the README's mapping table says
  otherwise (``FLORES101_CODES``). No checksum is published; one third-party record
  gives sha256 49fa8020…76f2cba6, unconfirmed, so it is only recorded, not enforced.

``sacrebleu`` (2.6.0, installed) defines no FLORES-101/200 data sets, so no md5 comes from it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.data.sources.archive import members
from lsnmt.data.sources.base import Context, Remote, Source
from lsnmt.io import DataError
from lsnmt.languages import flores_code

FLORES200 = Remote("https://dl.fbaipublicfiles.com/nllb/flores200_dataset.tar.gz",
                   sha256="b8b0b76783024b85797e5cc75064eb83fc5288b41e9654dabc7be6ae944011f6")
FLORES101 = Remote("https://dl.fbaipublicfiles.com/flores101/dataset/flores101_dataset.tar.gz")
SPLIT_FILES = {"valid": "dev", "test": "devtest", "multiway": "devtest"}
FLORES101_CODES = {"ar": "ara", "fa": "fas", "lv": "lav", "mn": "mon", "ms": "msa", "ps": "pus", "uz": "uzb",
                   "zh": "zho_simpl"}
"""ISO 639-1 -> FLORES-101 code where it is not the language part of the FLORES-200 code (README table)."""


def code200(lang: str) -> str:
    return flores_code(lang)


def code101(lang: str) -> str:
    return FLORES101_CODES.get(lang) or flores_code(lang).split("_")[0]


def _build(ctx: Context, remote: Remote, code_of: Callable[[str], str]) -> None:
    wanted: dict[str, list[tuple[str, str, Path]]] = {}
    for split in ctx.splits:
        if split not in SPLIT_FILES:
            raise DataError(f"{ctx.src.name}: FLORES has no {split} split (valid <- dev, test/multiway <- devtest)")
        sub = SPLIT_FILES[split]
        for lang in ctx.languages:
            try:
                name = f"{code_of(lang)}.{sub}"
            except KeyError:
                ctx.missing(split, lang)
                continue
            wanted.setdefault(name, []).append((split, lang, ctx.multiway(split, lang)))
    if not wanted:
        return
    archive, origin = ctx.obtain(remote)
    for name, fh in members(archive, wanted):
        data = fh.read()
        for _, _, out in wanted.pop(name):
            ctx.append(out, _lines(data), origin)
    for outs in wanted.values():
        for split, lang, _ in outs:
            ctx.missing(split, lang)


def _lines(data: bytes) -> list[bytes]:
    lines = data.split(b"\n")
    return lines[:-1] if lines and lines[-1] == b"" else lines


def build200(ctx: Context) -> None:
    _build(ctx, FLORES200, code200)


def build101(ctx: Context) -> None:
    _build(ctx, FLORES101, code101)


FLORES200_SOURCE = Source(kind="flores200", summary="FLORES-200 dev/devtest, multi-way (NLLB release tarball)",
                          splits=SOURCE_SPLITS["flores200"], build=build200, remotes=(FLORES200,))
FLORES101_SOURCE = Source(kind="flores101", summary="FLORES-101 dev/devtest, multi-way (official tarball)",
                          splits=SOURCE_SPLITS["flores101"], build=build101, remotes=(FLORES101,))
