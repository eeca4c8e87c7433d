"""``embedded``: real data shipped inside the repository (``embedded/PROVENANCE.md``), copied into the raw layout.

The corpus folder is ``<path>/<name>`` (``path`` defaults to ``embedded``), or
``path`` itself when that has no sub-folder of the corpus name. Its layout is
recognised from its contents, never from its name:

* Tatoeba test sets ``eng-XXX/test.{eng,XXX}`` (3-letter codes, ``swa`` for
  Swahili): bitext ``{split}/{name}/en-xx.{en,xx}`` for every requested split
  (the ``default`` experiment trains on them, see PROVENANCE for the caveat);
* FLORES ``dev/{code}.dev`` and ``devtest/{code}.devtest`` (FLORES-200 codes):
  multi-way ``mw.{lang}``; ``valid`` <- dev, ``test`` and ``multiway`` <- devtest;
* NTREX-128 ``{code}.txt``: one multi-way set, written for each requested split.

Every copied file is checked against the sha256 listed in ``<path>/MANIFEST.tsv``
when that file lists it. Bytes are copied unchanged.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

from lsnmt.data.config import ROOT
from lsnmt.data.fetch import file_digests
from lsnmt.data.source_kinds import SOURCE_SPLITS
from lsnmt.data.sources.archive import inside
from lsnmt.data.sources.base import Context, Origin, Source
from lsnmt.io import DataError
from lsnmt.languages import flores_code

TATOEBA_CODES = {"sw": "swa"}
"""Tatoeba folder codes that differ from the FLORES-200 code's language part (FLORES has ``swh``)."""
FLORES_FILES = {"valid": "dev", "test": "devtest", "multiway": "devtest"}


def build(ctx: Context) -> None:
    folder = _corpus_dir(ctx)
    kind = _layout(folder)
    builder = {"tatoeba": _tatoeba, "flores": _flores, "ntrex": _ntrex}[kind]
    builder(ctx, folder, _manifest(folder))


def _base(ctx: Context) -> Path:
    """The folder params.yaml names: files are read only below it (a symbolic link out of it is refused)."""
    return ROOT / (ctx.src.path or "embedded")


def _corpus_dir(ctx: Context) -> Path:
    base = _base(ctx)
    folder = base / ctx.src.name if (base / ctx.src.name).is_dir() else base
    if not folder.is_dir():
        raise DataError(f"embedded source {ctx.src.name!r}: {folder} is not a directory")
    return folder


def _layout(folder: Path) -> str:
    if any(d.is_dir() and (d.name.startswith("eng-") or d.name.endswith("-eng")) for d in folder.iterdir()):
        return "tatoeba"
    if (folder / "dev").is_dir() and (folder / "devtest").is_dir():
        return "flores"
    if any(folder.glob("*_*.txt")):
        return "ntrex"
    raise DataError(f"{folder}: not a known embedded layout (Tatoeba eng-XXX/, FLORES dev/+devtest/, NTREX *.txt)")


def _manifest(folder: Path) -> dict[Path, str]:
    """sha256 by absolute path from the nearest ``MANIFEST.tsv`` at or above ``folder`` (inside the repo)."""
    for d in (folder, *folder.parents):
        table = d / "MANIFEST.tsv"
        if table.is_file():
            with open(table, encoding="utf-8", newline="") as fh:
                return {d / row["path"]: row["sha256"] for row in csv.DictReader(fh, delimiter="\t")}
        if d == ROOT:
            break
    return {}


def _origin(path: Path, manifest: dict[Path, str]) -> Origin:
    sha = file_digests(path)["sha256"]
    want = manifest.get(path)
    if want is not None and want != sha:
        raise DataError(f"{path}: sha256 {sha} does not match {want} listed in its MANIFEST.tsv")
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    return Origin(str(shown), sha, "sha256" if want else "none")


def _codes(lang: str) -> list[str]:
    try:
        flores = flores_code(lang).split("_")[0]
    except KeyError:
        return [TATOEBA_CODES[lang]] if lang in TATOEBA_CODES else []
    return [TATOEBA_CODES[lang], flores] if lang in TATOEBA_CODES else [flores]


def _tatoeba_files(folder: Path, a: str, b: str) -> tuple[Path, Path] | None:
    for ca in _codes(a):
        for cb in _codes(b):
            for d in (folder / f"{ca}-{cb}", folder / f"{cb}-{ca}"):
                fa, fb = d / f"test.{ca}", d / f"test.{cb}"
                if fa.is_file() and fb.is_file():
                    return fa, fb
    return None


def _tatoeba(ctx: Context, folder: Path, manifest: dict[Path, str]) -> None:
    for split in ctx.splits:
        if split == "multiway":
            raise DataError(f"{ctx.src.name}: Tatoeba pairs are not a multi-way set (splits: train, valid, test)")
        for a, b in ctx.pairs(split):
            found = _tatoeba_files(folder, a, b)
            if found is None:
                ctx.missing(split, f"{a}-{b}")
                continue
            for src, out in zip(found, ctx.bitext(split, a, b), strict=True):
                ctx.copy_file(out, inside(src, _base(ctx)), _origin(src, manifest))


def _flores(ctx: Context, folder: Path, manifest: dict[Path, str]) -> None:
    for split in ctx.splits:
        if split not in FLORES_FILES:
            raise DataError(f"{ctx.src.name}: FLORES has no {split} split (valid <- dev, test/multiway <- devtest)")
        sub = FLORES_FILES[split]
        _multiway(ctx, split, lambda code, sub=sub: folder / sub / f"{code}.{sub}", manifest)


def _ntrex(ctx: Context, folder: Path, manifest: dict[Path, str]) -> None:
    for split in ctx.splits:
        _multiway(ctx, split, lambda code: folder / f"{code}.txt", manifest)


def _multiway(ctx: Context, split: str, file_of: Callable[[str], Path], manifest: dict[Path, str]) -> None:
    for lang in ctx.languages:
        try:
            src: Path | None = file_of(flores_code(lang))
        except KeyError:
            src = None
        if src is None or not src.is_file():
            ctx.missing(split, lang)
            continue
        ctx.copy_file(ctx.multiway(split, lang), inside(src, _base(ctx)), _origin(src, manifest))


SOURCE = Source(
    kind="embedded",
    summary="Repository copies of Tatoeba test sets, FLORES-200 dev/devtest and NTREX-128 (embedded/PROVENANCE.md)",
    splits=SOURCE_SPLITS["embedded"],
    build=build,
)
