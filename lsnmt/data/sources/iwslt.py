"""``iwslt14`` / ``iwslt17``: TED talk corpora of the IWSLT 2014 and 2017 evaluation campaigns (WIT3).

``iwslt14`` — the 8 English-centric pairs ar de es fa he it nl pl of the LMS paper
(following Lin et al. 2021; Xu et al. 2022), from WIT3's 2014-01 release: per pair an
archive ``{x}-en.tgz`` with members ``{x}-en/train.tags.{x}-en.{x|en}`` and
``{x}-en/IWSLT14.TED{,X}.{set}.{x}-en.{x|en}.xml``. WIT3's own URLs
(``https://wit3.fbk.eu/archive/2014-01/texts/{x}/en/{x}-en.tgz``) answer 404 since 2020
(fairseq issues #2984, #4361). Only de-en has a public copy, the one fairseq's
prepare-iwslt14.sh now fetches (``https://dl.fbaipublicfiles.com/fairseq/data/iwslt14/de-en.tgz``,
downloaded by default); the eight pairs exist together as the release archive ``2014-01.tgz``
(Google Drive id ``1GnBarJIbNgEIIDvUyKDtLmv35Qcxg6Ed``, what Xu et al.'s preprocess_iwslt14.sh
fetches with gdown; Drive serves large files through a confirmation page, so it is not
downloaded here). ``path:`` may name that outer ``2014-01.tgz`` in its original layout (its
``2014-01/texts/{x}/en/{x}-en.tgz`` members are used), a directory holding the per-pair
archives, or an extracted tree; without it, a pair other than de-en stops the download with
one line saying exactly this. No checksums are published. The splits follow Xu et al.'s
script: metadata lines of train.tags are dropped (``<title>``/``<description>`` keep their
text), every 23rd remaining pair is ``valid``, the rest ``train``; ``test`` = dev2010 +
TEDX.dev2012 + tst2010 + tst2011 + tst2012 (those present). Unlike their script the 1:23
split is taken before Moses cleaning (``prepare`` filters later), so ``valid`` differs slightly.

**Lowercased** (our decision, to follow the authors): Xu et al.'s script lowercases every split
(Moses ``lowercase.perl``) and maps ``’`` to ``'`` in the test sets, so the BLEU of LMS-FD
Tables 1-2 is on lowercased text; the raw files of this kind are lowercased the same way
(``str.lower``), and our scores are comparable with theirs only because of it.

``iwslt17`` — the multilingual TED task (de en it nl ro, English-centric training
and zero-shot pairs, CLM App. A.1). The release ``2017-01-trnmted`` archive
``DeEnItNlRo-DeEnItNlRo``: the original URL
``https://wit3.fbk.eu/archive/2017-01-trnmted/texts/DeEnItNlRo/DeEnItNlRo/DeEnItNlRo-DeEnItNlRo.tgz``
(fairseq's prepare-iwslt17-multilingual.sh) no longer serves it; the default is the
zip copy on the Hugging Face hub that public scripts download (its inner layout is
unconfirmed; members are found by name). ``path:`` may also name the Google Drive
``2017-01-trnmted.tgz`` (md5 aca701032b1c4411afc4d9fa367796ba in torchtext's
dataset table, not enforced). Splits as the HF iwslt2017 loader, whose counts
match CLM Table 7 (en-it 231,619 / 929 / 1,566): ``train`` = train.tags without any
metadata line, ``valid`` = dev2010, ``test`` = tst2010 (``<seg>`` text).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from pathlib import Path

from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.data.sources.archive import extract, seg_lines
from lsnmt.data.sources.base import Context, Origin, Remote, Source, pair_key, strip_newlines
from lsnmt.io import DataError

IWSLT14_LANGS = ("ar", "de", "es", "fa", "he", "it", "nl", "pl")
RELEASE_2014 = ("2014-01.tgz (WIT3's 2014-01 release; Google Drive id 1GnBarJIbNgEIIDvUyKDtLmv35Qcxg6Ed, e.g. "
                "`gdown 1GnBarJIbNgEIIDvUyKDtLmv35Qcxg6Ed`)")
FAIRSEQ_DE_EN = "https://dl.fbaipublicfiles.com/fairseq/data/iwslt14/de-en.tgz"
IWSLT14 = {x: Remote(FAIRSEQ_DE_EN) if x == "de" else Remote(
    f"https://wit3.fbk.eu/archive/2014-01/texts/{x}/en/{x}-en.tgz",
    gone=f"IWSLT'14 {x}-en has no working download URL (WIT3's archive answers 404: fairseq issues #2984, #4361; "
         f"only de-en has a public copy); fetch {RELEASE_2014} and set `path:` of this source to that file, kept "
         "as it is (it holds 2014-01/texts/{x}/en/{x}-en.tgz for all eight pairs)") for x in IWSLT14_LANGS}
IWSLT14_TEST = ("IWSLT14.TED.dev2010", "IWSLT14.TEDX.dev2012", "IWSLT14.TED.tst2010", "IWSLT14.TED.tst2011",
                "IWSLT14.TED.tst2012")
VALID_EVERY = 23

IWSLT17 = Remote("https://huggingface.co/datasets/iwslt2017/resolve/main/data/2017-01-trnmted/texts/DeEnItNlRo/"
                 "DeEnItNlRo/DeEnItNlRo-DeEnItNlRo.zip", alt_names=("DeEnItNlRo-DeEnItNlRo.tgz",))
IWSLT17_LANGS = ("de", "en", "it", "nl", "ro")
IWSLT17_SETS = {"valid": "IWSLT17.TED.dev2010", "test": "IWSLT17.TED.tst2010"}

_KEPT_TAG = re.compile(rb"^\s*<(title|description)>(.*)</\1>\s*$")


def text_of(line: bytes, *, keep_title: bool) -> bytes | None:
    """The sentence of a ``train.tags`` line, or ``None`` for a metadata line (``<url>``, ``<talkid>`` …)."""
    if not line.lstrip().startswith(b"<"):
        return line
    match = _KEPT_TAG.match(line) if keep_title else None
    return match.group(2).strip() if match else None


def lowercase(line: bytes, *, test: bool = False) -> bytes:
    """Xu et al.'s IWSLT'14 text: lowercased; in the test sets ``’`` becomes ``'`` (see the module docstring)."""
    text = line.decode("utf-8", "surrogateescape").lower()
    return (text.replace("\u2019", "'") if test else text).encode("utf-8", "surrogateescape")


def train_tags(fa: Path, fb: Path, *, keep_title: bool) -> Iterator[tuple[bytes, bytes]]:
    """Aligned sentence pairs of two ``train.tags`` files; a pair is dropped if either side is metadata."""
    with open(fa, "rb") as ha, open(fb, "rb") as hb:
        for n, (la, lb) in enumerate(itertools.zip_longest(strip_newlines(ha), strip_newlines(hb)), start=1):
            if la is None or lb is None:
                raise DataError(f"{fa} and {fb} differ in length (from line {n})")
            ta, tb = text_of(la, keep_title=keep_title), text_of(lb, keep_title=keep_title)
            if ta is not None and tb is not None:
                yield ta, tb


def segments(fa: Path, fb: Path) -> tuple[list[bytes], list[bytes]]:
    """The ``<seg>`` texts of two parallel IWSLT XML files; DataError if their counts differ."""
    with open(fa, "rb") as ha, open(fb, "rb") as hb:
        sa, sb = list(seg_lines(ha)), list(seg_lines(hb))
    if len(sa) != len(sb):
        raise DataError(f"{fa} has {len(sa)} segments, {fb} has {len(sb)}")
    return sa, sb


def _write(ctx: Context, split: str, key: tuple[str, str], rows: dict[str, list[bytes]], origin: Origin) -> None:
    for lang, out in zip(key, ctx.bitext(split, *key), strict=True):
        ctx.append(out, rows[lang], origin)


def _supported_pairs(ctx: Context, langs: tuple[str, ...], *, pivot_only: bool) -> dict[str, list[tuple[str, str]]]:
    """Pairs per split that the kind can provide; the others are logged as missing."""
    out: dict[str, list[tuple[str, str]]] = {}
    for split in ctx.splits:
        for a, b in ctx.pairs(split):
            if a in langs and b in langs and (not pivot_only or "en" in (a, b)):
                out.setdefault(split, []).append((a, b))
            else:
                ctx.missing(split, f"{a}-{b}")
    return out


def build14(ctx: Context) -> None:
    wanted = _supported_pairs(ctx, ("en", *IWSLT14_LANGS), pivot_only=True)
    for x in IWSLT14_LANGS:
        key = pair_key("en", x, ctx.data.pivot)
        splits = [s for s, pairs in wanted.items() if key in pairs]
        if not splits:
            continue
        archive, origin = ctx.obtain(IWSLT14[x])
        p = f"{x}-en"
        names = [f"train.tags.{p}.{lang}" for lang in (x, "en")]
        names += [f"{t}.{p}.{lang}.xml" for t in IWSLT14_TEST for lang in (x, "en")]
        try:
            files = extract(archive, names, ctx.scratch())
            _build14_pair(ctx, x, key, splits, files, origin)
        finally:
            ctx.clean_scratch()


def _build14_pair(ctx: Context, x: str, key: tuple[str, str], splits: list[str], files: dict[str, Path],
                  origin: Origin) -> None:
    p = f"{x}-en"
    rows: dict[str, dict[str, list[bytes]]] = {s: {x: [], "en": []} for s in ("train", "valid", "test")}
    tx, ten = files.get(f"train.tags.{p}.{x}"), files.get(f"train.tags.{p}.en")
    if tx and ten:
        for i, (a, b) in enumerate(train_tags(tx, ten, keep_title=True), start=1):
            split = "valid" if i % VALID_EVERY == 0 else "train"
            rows[split][x].append(lowercase(a))
            rows[split]["en"].append(lowercase(b))
    for t in IWSLT14_TEST:
        fx, fen = files.get(f"{t}.{p}.{x}.xml"), files.get(f"{t}.{p}.en.xml")
        if fx and fen:
            sx, sen = segments(fx, fen)
            rows["test"][x] += [lowercase(s, test=True) for s in sx]
            rows["test"]["en"] += [lowercase(s, test=True) for s in sen]
    for split in splits:
        if rows[split][x]:
            _write(ctx, split, key, rows[split], origin)
        else:
            ctx.missing(split, f"{key[0]}-{key[1]}")


def _name17(split: str, p: str, lang: str) -> str:
    return f"train.tags.{p}.{lang}" if split == "train" else f"{IWSLT17_SETS[split]}.{p}.{lang}.xml"


def build17(ctx: Context) -> None:
    wanted = _supported_pairs(ctx, IWSLT17_LANGS, pivot_only=False)
    if not wanted:
        return
    names = {_name17(split, p, lang) for split, pairs in wanted.items() for a, b in pairs
             for p in (f"{a}-{b}", f"{b}-{a}") for lang in (a, b)}
    archive, origin = ctx.obtain(IWSLT17)
    try:
        files = extract(archive, names, ctx.scratch())
        for split, pairs in wanted.items():
            for key in pairs:
                _build17_pair(ctx, split, key, files, origin)
    finally:
        ctx.clean_scratch()


def _build17_pair(ctx: Context, split: str, key: tuple[str, str], files: dict[str, Path], origin: Origin) -> None:
    a, b = key
    for p in (f"{a}-{b}", f"{b}-{a}"):
        fa, fb = files.get(_name17(split, p, a)), files.get(_name17(split, p, b))
        if fa and fb:
            break
    else:
        ctx.missing(split, f"{a}-{b}")
        return
    if split == "train":
        pairs = list(train_tags(fa, fb, keep_title=False))
        rows = {a: [x for x, _ in pairs], b: [y for _, y in pairs]}
    else:
        sa, sb = segments(fa, fb)
        rows = {a: sa, b: sb}
    _write(ctx, split, key, rows, origin)


IWSLT14_SOURCE = Source(kind="iwslt14", summary="IWSLT 2014 TED, 8 English-centric pairs (LMS setup)",
                        splits=SOURCE_SPLITS["iwslt14"], build=build14, remotes=tuple(IWSLT14.values()), nested=True)
IWSLT17_SOURCE = Source(kind="iwslt17", summary="IWSLT 2017 multilingual TED (de en it nl ro), train/dev2010/tst2010",
                        splits=SOURCE_SPLITS["iwslt17"], build=build17, remotes=(IWSLT17,), nested=True)
