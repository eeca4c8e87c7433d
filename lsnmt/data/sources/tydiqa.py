"""``tydiqa``: TyDiQA-GoldP v1.1 (Clark et al. 2020), the gold-passage task, in SQuAD v1.1 JSON.

The official files on Google Cloud Storage (URLs from the TyDiQA README and XTREME's download script):
``tydiqa-goldp-v1.1-train.json`` (all nine GoldP languages) and ``tydiqa-goldp-v1.1-dev.json`` (reported
as test, as XTREME and LMS-FD Table 8 do). No checksums are published: the sha256 seen is recorded in
``raw/MANIFEST.tsv``. ``path:`` is a directory holding both files (``mirror:`` a base URL or directory).
Output, bytes unchanged (a final newline added if missing): ``raw/tasks/{task}/<the two file names>``.
"""

from __future__ import annotations

from lsnmt.data import layout
from lsnmt.data.config import ROOT
from lsnmt.data.sources.base import Context, Remote, Source
from lsnmt.io import DataError

BASE = "https://storage.googleapis.com/tydiqa/v1.1/"
REMOTES = (Remote(BASE + "tydiqa-goldp-v1.1-train.json"), Remote(BASE + "tydiqa-goldp-v1.1-dev.json"))


def build(ctx: Context) -> None:
    if ctx.src.path and not (ROOT / ctx.src.path).is_dir():
        raise DataError(f"tydiqa source {ctx.src.name!r}: path {ctx.src.path!r} must be a directory holding "
                        f"{' and '.join(r.name for r in REMOTES)}")
    out = layout.raw_task_dir(ctx.raw_root, ctx.src.name)
    for remote in REMOTES:
        path, origin = ctx.obtain(remote)
        if path.is_dir():
            path = path / remote.name
            if not path.is_file():
                raise DataError(f"tydiqa source {ctx.src.name!r}: {path} is missing")
        ctx.copy_file(out / remote.name, path, origin)


SOURCE = Source(
    kind="tydiqa",
    summary="TyDiQA-GoldP v1.1 train / dev JSON (SQuAD format)",
    splits=frozenset({"train", "test"}),
    build=build,
    remotes=REMOTES,
)
