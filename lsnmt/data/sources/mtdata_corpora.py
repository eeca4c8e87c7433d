"""``mtdata``: parallel corpora by their mtdata dataset names (Gowda et al. 2021, https://pypi.org/project/mtdata).

mtdata keeps an index of some 290,000 MT datasets (WMT / statmt.org releases, OPUS, ParaCrawl, Tilde, WikiMatrix,
JESC, KFTT ...): for each name and language pair its URL(s), archive members and format. This kind looks the
experiment's pairs up there and reads the segments with mtdata's own parsers (plain text, TSV, TMX, SGML), so
that no URL table is kept by hand here; the files themselves go through :func:`lsnmt.data.fetch.fetch` like every
other kind (download cache, resume, retries, ``path:`` / ``mirror:``). mtdata publishes no checksums: the sha256
seen is recorded in ``raw/MANIFEST.tsv``.

``datasets:`` names, per split, mtdata datasets without their languages (``group-name-version``, e.g.
``OPUS-ccmatrix-v1``, ``Statmt-news_commentary-16``, ``Statmt-newstest_eten-2018``). For every pair of the split
each name is looked up in both language orders; the datasets found are concatenated in the listed order, a pair
none of them has is logged as missing (``download`` then names the first direction without data). A name mtdata
does not know at all stops the run. In the cache and in a ``path:`` directory a file is called
``{dataset id}_{basename of its URL}`` (OPUS names every corpus ``de-en.txt.zip``); a ``mirror:`` replaces the
host as for the other kinds, so one mirror serves one source.

mtdata builds its index on first use (about 20 s, offline, from the package's own files) and caches it in
``$MTDATA`` (default ``~/.mtdata``) as a pickle that it loads on later runs: keep that directory private.
"""

from __future__ import annotations

import fnmatch
import logging
import re
import shutil
import tarfile
import zipfile
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from lsnmt.data.fetch import basename
from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.data.sources.base import Context, Origin, Remote, Source
from lsnmt.io import DataError

log = logging.getLogger(__name__)

_NAME = re.compile(r"^[^-\s]+-[^-\s]+-[^-\s]+$")


@lru_cache(maxsize=1)
def _index() -> Any:  # mtdata's Index
    try:
        from mtdata.index import Index
    except ImportError:
        raise DataError("kind 'mtdata' needs the mtdata package: pip install 'mtdata>=0.5.1'") from None
    return Index.get_instance()


@lru_cache(maxsize=1)
def known_names() -> frozenset[str]:
    """Every ``group-name-version`` of mtdata's index."""
    return frozenset(f"{d.group}-{d.name}-{d.version}" for d in _index().entries)


def _code(lang: str) -> str:
    from mtdata.iso.bcp47 import bcp47

    return str(bcp47(lang))


def find(name: str, a: str, b: str) -> Any | None:  # mtdata's Entry
    """mtdata's entry of dataset ``name`` for languages ``a`` and ``b`` (either order), or ``None``."""
    from mtdata.entry import DatasetId

    if not _NAME.match(name):
        raise DataError(f"{name!r} is not an mtdata dataset name (group-name-version, e.g. OPUS-ccmatrix-v1)")
    if name not in known_names():
        raise DataError(f"mtdata has no dataset {name!r} (`mtdata list` shows the names)")
    for x, y in ((a, b), (b, a)):
        entry = _index().entries.get(DatasetId.parse(f"{name}-{_code(x)}-{_code(y)}"))
        if entry is not None:
            return entry
    return None


def _remotes(entry: Any) -> list[Remote]:
    urls = entry.url if isinstance(entry.url, (tuple, list)) else (entry.url,)
    return [Remote(u, cache_name=f"{entry.did}_{basename(u)}", alt_names=(basename(u),)) for u in urls]


def _members(archive: Path, patterns: list[str], into: Path) -> list[Path]:
    """Extract the members matching each of mtdata's ``in_paths`` (globs), one per pattern, in pattern order."""
    if archive.is_dir():
        names = sorted(p.relative_to(archive).as_posix() for p in archive.rglob("*") if p.is_file())
        opener = None
    elif zipfile.is_zipfile(archive):
        zf = zipfile.ZipFile(archive)
        names, opener = [i.filename for i in zf.infolist() if not i.is_dir()], zf.open
    else:
        tf = tarfile.open(archive)
        names, opener = [m.name for m in tf.getmembers() if m.isfile()], tf.extractfile
    out = []
    for i, pattern in enumerate(patterns):
        hits = [n for n in names if fnmatch.fnmatch(n.removeprefix("./"), pattern)] or \
            [n for n in names if fnmatch.fnmatch(n.rsplit("/", 1)[-1], pattern)]
        if len(hits) != 1:
            raise DataError(f"{archive}: {len(hits)} members match mtdata's {pattern!r} (expected one)")
        dest = into / f"{i}_{hits[0].rsplit('/', 1)[-1]}"
        if opener is None:
            shutil.copyfile(archive / hits[0], dest)
        else:
            with opener(hits[0]) as src, open(dest, "wb") as fh:  # type: ignore[operator]
                shutil.copyfileobj(src, fh, 1 << 20)
        out.append(dest)
    return out


def segments(entry: Any, files: list[Path], into: Path) -> Iterator[tuple[str, str]]:
    """``(first, second)`` segments in the entry's language order, read by mtdata's parser."""
    from mtdata.parser import Parser

    if entry.is_archive:
        paths, ext = _members(files[0], list(entry.in_paths), into), entry.in_ext
    else:
        paths, ext = files, entry.ext
    for seg in Parser(paths, ext=ext, ent=entry).read_segs(show_pbar=False):
        yield seg[0], seg[1]


def _line(text: str) -> bytes:
    return text.replace("\r", " ").replace("\n", " ").encode("utf-8", "surrogateescape")


def _pair(ctx: Context, split: str, a: str, b: str) -> bool:
    found = False
    out_a, out_b = ctx.bitext(split, a, b)
    for name in ctx.src.datasets.get(split, ()):
        entry = find(name, a, b)
        if entry is None:
            continue
        obtained = [ctx.obtain(r) for r in _remotes(entry)]
        origin = Origin(" ".join(o.source for _, o in obtained), " ".join(o.sha256 for _, o in obtained),
                        obtained[0][1].check)
        swap = str(entry.did.langs[0]) != _code(a)
        try:
            rows = [(y, x) if swap else (x, y) for x, y in segments(entry, [p for p, _ in obtained], ctx.scratch())]
        finally:
            ctx.clean_scratch()
        ctx.append(out_a, (_line(x) for x, _ in rows), origin)
        ctx.append(out_b, (_line(y) for _, y in rows), origin)
        log.info("%s %s %s-%s: %d segments from mtdata %s", ctx.src.name, split, a, b, len(rows), entry.did)
        found = True
    return found


def build(ctx: Context) -> None:
    if not ctx.src.datasets:
        raise DataError(f"source {ctx.src.name!r}: kind 'mtdata' needs `datasets:` (split -> mtdata dataset names)")
    for split in ctx.splits:
        if split not in ctx.src.datasets:
            raise DataError(f"source {ctx.src.name!r}: `datasets:` names nothing for split {split!r}")
        for a, b in ctx.pairs(split):
            if not _pair(ctx, split, a, b):
                ctx.missing(split, f"{a}-{b} (none of {', '.join(ctx.src.datasets[split])})")


SOURCE = Source(kind="mtdata", summary="Parallel corpora by mtdata dataset name (URLs and formats from mtdata's index)",
                splits=SOURCE_SPLITS["mtdata"], build=build)
