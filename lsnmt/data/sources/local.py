"""``local``: a corpus a user has already prepared on disk, in the raw layout itself.

For data assembled elsewhere (a corpus behind a registration, or the LSL
paper's mix after M2M-100's cleaning scripts rather than the downloadable
``mtdata`` sources params.yaml names), point ``path:`` at a directory laid out like
``data/{exp}/raw/*/{corpus}``::

    {path}/{split}/{a}-{b}.{a}    {path}/{split}/{a}-{b}.{b}    (bitext, pivot first)
    {path}/{split}/mw.{lang}                                    (multi-way / monolingual)

Files are copied byte for byte; their sha256 goes to ``raw/MANIFEST.tsv``. A symbolic link
that leads outside ``path`` is refused.
"""

from __future__ import annotations

from pathlib import Path

from lsnmt.data.config import ROOT
from lsnmt.data.fetch import file_digests
from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.data.sources.archive import inside
from lsnmt.data.sources.base import Context, Origin, Source
from lsnmt.io import DataError


def _origin(path: Path) -> Origin:
    return Origin(str(path), file_digests(path)["sha256"], "none")


def build(ctx: Context) -> None:
    if not ctx.src.path:
        raise DataError(f"source {ctx.src.name!r}: kind 'local' needs `path:` (a directory in the raw layout)")
    folder = Path(ctx.src.path) if Path(ctx.src.path).is_absolute() else ROOT / ctx.src.path
    if not folder.is_dir():
        raise DataError(f"source {ctx.src.name!r}: path {ctx.src.path!r} is not a directory ({folder})")
    for split in ctx.splits:
        if split == "multiway":
            for lang in ctx.languages:
                src = folder / split / f"mw.{lang}"
                if src.is_file():
                    ctx.copy_file(ctx.multiway(split, lang), inside(src, folder), _origin(src))
                else:
                    ctx.missing(split, lang)
            continue
        for a, b in ctx.pairs(split):
            found = [folder / split / f"{a}-{b}.{x}" for x in (a, b)]
            if not all(f.is_file() for f in found):
                found = [folder / split / f"mw.{x}" for x in (a, b)]
            if not all(f.is_file() for f in found):
                ctx.missing(split, f"{a}-{b}")
                continue
            for src, out in zip(found, ctx.bitext(split, a, b), strict=True):
                ctx.copy_file(out, inside(src, folder), _origin(src))


SOURCE = Source(
    kind="local",
    summary="A corpus already on disk in the raw layout ({split}/{a}-{b}.{lang}, {split}/mw.{lang})",
    splits=SOURCE_SPLITS["local"],
    build=build,
)
