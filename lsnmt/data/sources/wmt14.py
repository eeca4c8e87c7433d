"""``wmt14``: the WMT14 news translation task, English-centric: cs de fr hi ru.

* ``test`` = newstest2014, full version, as sacrebleu's ``wmt14/full``:
  https://statmt.org/wmt14/test-full.tgz (md5 a8cd784e006feb32ac6f3d9ec7eb389a, from the
  installed sacrebleu 2.6.0), members ``test-full/newstest2014-{x}en-src.en.sgm`` and
  ``-ref.{x}.sgm`` (sacrebleu's en-x files), ``<seg>`` text read as sacrebleu does.
* ``valid`` = newstest2013 (cs de fr ru) and newsdev2014 (hi), plain text in WMT19's
  dev.tgz: https://data.statmt.org/wmt19/translation-task/dev.tgz (md5
  f2ec7af5947c19e0cacb3882eb208002, sacrebleu ``wmt19/dev``); member names
  ``dev/newstest2013.{x,en}`` and ``dev/newsdev2014.{hi,en}`` from the HF wmt_utils table.
* ``train`` = the freely downloadable WMT14 corpora, concatenated in this order
  (URLs and member names as in the HF/TFDS wmt_utils table and fairseq's
  prepare-wmt14 scripts; no checksums are published, the observed sha256 is recorded):

  - Europarl v7 (cs de fr): https://www.statmt.org/wmt13/training-parallel-europarl-v7.tgz
  - Common Crawl (cs de fr ru): https://www.statmt.org/wmt13/training-parallel-commoncrawl.tgz
  - News Commentary v9 (cs de fr ru): https://www.statmt.org/wmt14/training-parallel-nc-v9.tgz
  - Wiki Headlines, one ``x ||| en`` file per pair: hi from https://www.statmt.org/wmt14/wiki-titles.tgz
    (member ``wiki/hi-en/wiki-titles.hi-en``), ru from WMT15's https://www.statmt.org/wmt15/wiki-titles.tgz
    (member ``wiki/ru-en/wiki.ru-en``), as the TFDS / Hugging Face wmt loaders read them (their table notes
    that the WMT14 and WMT15 ru-en files are identical). Both archives are called ``wiki-titles.tgz``: the
    cache and a ``path:`` directory hold the WMT15 one as ``wmt15-wiki-titles.tgz``.

  Not included: CzEng 1.0 (cs), Yandex 1M (ru) and HindEnCorp (hi) need registration or
  a manual download; the 10^9 fr-en and UN corpora (fr) are left out for size.

Languages of later WMT years (et fi gu kk lv ro tr zh, as in CLSR's WMT set) are not
provided by this kind; they are logged as missing and ``download`` then names the
first direction without data.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.data.sources.archive import members, seg_lines
from lsnmt.data.sources.base import Context, Origin, Remote, Source, pair_key, strip_newlines
from lsnmt.io import DataError

LANGS = ("cs", "de", "fr", "hi", "ru")
STATMT = "https://www.statmt.org"
EUROPARL = Remote(f"{STATMT}/wmt13/training-parallel-europarl-v7.tgz")
COMMONCRAWL = Remote(f"{STATMT}/wmt13/training-parallel-commoncrawl.tgz")
NEWS_COMMENTARY = Remote(f"{STATMT}/wmt14/training-parallel-nc-v9.tgz")
WIKI_TITLES = Remote(f"{STATMT}/wmt14/wiki-titles.tgz")
WIKI_TITLES_15 = Remote(f"{STATMT}/wmt15/wiki-titles.tgz", cache_name="wmt15-wiki-titles.tgz")
DEV = Remote("https://data.statmt.org/wmt19/translation-task/dev.tgz", md5="f2ec7af5947c19e0cacb3882eb208002")
TEST = Remote("https://statmt.org/wmt14/test-full.tgz", md5="a8cd784e006feb32ac6f3d9ec7eb389a")

Members = dict[str, tuple[str, ...]]
"""Language -> member names: ``(x side, en side)``, or ``(joined,)`` for one ``x ||| en`` file."""


def _two(pattern: str, langs: str) -> Members:
    return {x: (pattern.format(x=x, lang=x), pattern.format(x=x, lang="en")) for x in langs.split()}


TABLES: dict[str, tuple[tuple[Remote, Members], ...]] = {
    "train": (
        (EUROPARL, _two("europarl-v7.{x}-en.{lang}", "cs de fr")),
        (COMMONCRAWL, _two("commoncrawl.{x}-en.{lang}", "cs de fr ru")),
        (NEWS_COMMENTARY, _two("news-commentary-v9.{x}-en.{lang}", "cs de fr ru")),
        (WIKI_TITLES, {"hi": ("wiki-titles.hi-en",)}),
        (WIKI_TITLES_15, {"ru": ("wiki.ru-en",)}),
    ),
    "valid": ((DEV, {**_two("newstest2013.{lang}", "cs de fr ru"), "hi": ("newsdev2014.hi", "newsdev2014.en")}),),
    "test": ((TEST, {x: (f"newstest2014-{x}en-ref.{x}.sgm", f"newstest2014-{x}en-src.en.sgm") for x in LANGS}),),
}


def _needed(ctx: Context, split: str) -> list[str]:
    out = []
    for a, b in ctx.pairs(split):
        x = b if a == "en" else a if b == "en" else None
        if x in LANGS:
            out.append(x)
        else:
            ctx.missing(split, f"{a}-{b}")
    return out


def _reader(name: str) -> Callable[[Iterable[bytes]], Iterator[bytes]]:
    return seg_lines if name.endswith(".sgm") else strip_newlines


def build(ctx: Context) -> None:
    for split in ctx.splits:
        langs = _needed(ctx, split)
        for remote, table in TABLES[split]:
            here = [x for x in langs if x in table]
            if here:
                _from_archive(ctx, split, remote, {x: table[x] for x in here})


def _outputs(ctx: Context, split: str, x: str) -> tuple[Path, Path]:
    """(x side, en side) output files of pair en-x."""
    key = pair_key("en", x, ctx.data.pivot)
    sides = dict(zip(key, ctx.bitext(split, *key), strict=True))
    return sides[x], sides["en"]


def _from_archive(ctx: Context, split: str, remote: Remote, table: Members) -> None:
    archive, origin = ctx.obtain(remote)
    route: dict[str, tuple[str, int]] = {name: (x, i) for x, names in table.items() for i, name in enumerate(names)}
    for name, fh in members(archive, route):
        x, side = route.pop(name)
        if len(table[x]) == 1:
            _joined(ctx, split, x, fh.read(), origin)
        else:
            ctx.append(_outputs(ctx, split, x)[side], _reader(name)(fh), origin)
    if route:
        raise DataError(f"{remote.url} (read from {archive}) has no member {sorted(route)[0]}")


def _joined(ctx: Context, split: str, x: str, data: bytes, origin: Origin) -> None:
    """Write a Wiki Headlines file (``x ||| en`` per line) as two aligned sides."""
    xs, ens = [], []
    for n, line in enumerate(data.split(b"\n"), start=1):
        if not line:
            continue
        parts = line.split(b"|||")
        if len(parts) != 2:
            raise DataError(f"{origin.source}: line {n} of the {x}-en headlines is not 'x ||| en'")
        xs.append(parts[0].strip())
        ens.append(parts[1].strip())
    out_x, out_en = _outputs(ctx, split, x)
    ctx.append(out_x, xs, origin)
    ctx.append(out_en, ens, origin)


SOURCE = Source(kind="wmt14", summary="WMT14 news task cs/de/fr/hi/ru-en: public training corpora, newstest2013/14",
                splits=SOURCE_SPLITS["wmt14"], build=build,
                remotes=(EUROPARL, COMMONCRAWL, NEWS_COMMENTARY, WIKI_TITLES, WIKI_TITLES_15, DEV, TEST))
