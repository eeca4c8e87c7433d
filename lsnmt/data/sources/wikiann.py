"""``wikiann``: WikiANN NER (Pan et al. 2017) in the balanced train / dev / test splits of Rahimi et al. (2019).

The release is Rahimi et al.'s ``panx_dataset.tar`` (https://github.com/afshinrahimi/mmner): an outer archive
of ``{lang}.tar.gz`` archives, each holding the files ``train``, ``dev`` and ``test`` (format:
``lsnmt/tasks/data.py``). Its Dropbox link has failed since 2021; the copy downloaded here is the one the
Hugging Face ``wikiann`` loader, XTREME and others read, ``panx_dataset.zip`` on Hugging Face's S3 bucket (a
zip of the same ``{lang}.tar.gz`` files at its top level). No checksum is published: the sha256 seen is
recorded in ``raw/MANIFEST.tsv`` and ``sha256:`` pins it.

``path:`` may be the zip or the original tar, a directory holding one of them or the ``{lang}.tar.gz`` files,
or an extracted tree
``{lang}/{train,dev,test}`` (the embedded fixtures). Output, bytes unchanged:
``raw/tasks/{task}/{lang}/{train,dev,test}``.
"""

from __future__ import annotations

import tarfile
from pathlib import Path
from typing import BinaryIO

from lsnmt.data import layout
from lsnmt.data.fetch import file_digests
from lsnmt.data.sources.archive import inside, members
from lsnmt.data.sources.base import Context, Origin, Remote, Source
from lsnmt.io import DataError

REMOTE = Remote("https://s3.amazonaws.com/datasets.huggingface.co/wikiann/1.1.0/panx_dataset.zip",
                alt_names=("panx_dataset.tar",))
FILES = ("train", "dev", "test")


def _from_inner(ctx: Context, fh: BinaryIO, lang: str, out: Path, origin: Origin) -> set[str]:
    """Copy the split files of one ``{lang}.tar.gz`` stream; return the names found."""
    found: set[str] = set()
    with tarfile.open(fileobj=fh, mode="r|gz") as tf:
        for info in tf:
            name = info.name.rstrip("/").rsplit("/", 1)[-1]
            if info.isfile() and name in FILES:
                member = tf.extractfile(info)
                assert member is not None
                ctx.copy(out / lang / name, member, origin)
                found.add(name)
    return found


def build(ctx: Context) -> None:
    out = layout.raw_task_dir(ctx.raw_root, ctx.src.name)
    location, origin = ctx.obtain(REMOTE)
    found: dict[str, set[str]] = {lang: set() for lang in ctx.languages}
    inner = {f"{lang}.tar.gz": lang for lang in ctx.languages}
    if location.is_dir():
        for lang in ctx.languages:
            folder = location / lang
            if folder.is_dir():
                for name in FILES:
                    if (folder / name).is_file():
                        src = inside(folder / name, location)
                        ctx.copy_file(out / lang / name, src, Origin(str(src), file_digests(src)["sha256"], "none"))
                        found[lang].add(name)
        inner = {k: v for k, v in inner.items() if not found[v]}
    for name, fh in members(location, inner):
        found[inner[name]] |= _from_inner(ctx, fh, inner[name], out, origin)
    missing = [f"{lang}/{f}" for lang in ctx.languages for f in FILES if f not in found[lang]]
    if missing:
        raise DataError(f"WikiANN ({location}): no split file {', '.join(missing[:6])}"
                        f"{' …' if len(missing) > 6 else ''}; expected {{lang}}.tar.gz archives with train/dev/test "
                        "(Rahimi et al.'s panx_dataset.tar) or extracted {lang}/{train,dev,test} folders")


SOURCE = Source(
    kind="wikiann",
    summary="WikiANN NER, Rahimi et al.'s train/dev/test splits (panx_dataset.zip, Hugging Face's copy)",
    splits=frozenset({"train", "valid", "test"}),
    build=build,
    remotes=(REMOTE,),
)
