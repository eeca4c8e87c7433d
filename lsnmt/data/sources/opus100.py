"""``opus100``: OPUS-100 v1.0 (Zhang et al., 2020), English-centric, 99 pairs, train / dev / test.

Source: the full release https://object.pouta.csc.fi/OPUS-100/v1.0/opus-100-corpus-v1.0.tar.gz
(URL confirmed on the OPUS-100 page of Helsinki-NLP/OPUS-ingest and in the CLM paper's
footnote 7). Layout, confirmed from mtdata's OPUS-100 index and public preparation scripts::

    opus-100-corpus/v1.0/supervised/{p}/opus.{p}-{train,dev,test}.{lang}   p = the pair sorted, e.g. de-en, en-fr
    opus-100-corpus/v1.0/zero-shot/{p}/opus.{p}-test.{lang}               15 pairs of ar de fr nl ru zh (test only)

No checksum is published for the tarball: the sha256 seen on first download is
recorded in ``raw/MANIFEST.tsv`` (``source_sha256``), and ``sha256:`` in params.yaml
pins it. The tarball (about 2.5 GB) is streamed once; only the needed members are
read. ``dev`` feeds ``valid``. Five languages (an dz hy mn yo) have no dev/test
files; their absence is logged and the download checks decide whether it matters.
"""

from __future__ import annotations

from pathlib import Path

from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.data.sources.archive import members
from lsnmt.data.sources.base import Context, Remote, Source

REMOTE = Remote("https://object.pouta.csc.fi/OPUS-100/v1.0/opus-100-corpus-v1.0.tar.gz")
SPLIT_FILES = {"train": "train", "valid": "dev", "test": "test"}


def member_names(split: str, a: str, b: str) -> tuple[str, str]:
    """Release file names of the two sides (a, b) of one pair and split."""
    folder = "-".join(sorted((a, b)))
    return f"opus.{folder}-{SPLIT_FILES[split]}.{a}", f"opus.{folder}-{SPLIT_FILES[split]}.{b}"


def build(ctx: Context) -> None:
    wanted: dict[str, Path] = {}
    pairs: dict[tuple[str, str, str], tuple[str, str]] = {}
    for split in ctx.splits:
        for a, b in ctx.pairs(split):
            names = member_names(split, a, b)
            pairs[(split, a, b)] = names
            wanted.update(zip(names, ctx.bitext(split, a, b), strict=True))
    if not wanted:
        return
    archive, origin = ctx.obtain(REMOTE)
    found: set[str] = set()
    for name, fh in members(archive, wanted):
        ctx.copy(wanted[name], fh, origin)
        found.add(name)
    for (split, a, b), names in pairs.items():
        if not found.issuperset(names):
            ctx.missing(split, f"{a}-{b}")


SOURCE = Source(
    kind="opus100",
    summary="OPUS-100 v1.0 English-centric train/dev/test (+ zero-shot test) from the official tarball",
    splits=SOURCE_SPLITS["opus100"],
    build=build,
    remotes=(REMOTE,),
)
