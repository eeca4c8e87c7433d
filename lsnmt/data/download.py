"""The ``download`` stage: every source of an experiment into ``data/{exp}/raw``, checked, with a manifest.

The raw directory is built under a temporary name and swapped into place only
when every source was written and every check passed (:func:`lsnmt.io.atomic_dir`),
so a failed or interrupted run leaves the previous raw directory (or none) as it
was. Archives are cached, resumably, in ``download.cache_dir`` (``work/downloads``).

The NER / QA datasets of ``task_cfg`` are fetched by ``task_prep`` (:func:`download_tasks`), into
``data/{exp}/task_raw/tasks/{task}`` in their own formats (:func:`~lsnmt.data.sources.materialize_task`), with their
own manifest: ``download`` reads no task setting, so editing a task reruns no data stage.

Checks: every training direction has ``train`` data and every evaluation
direction has ``valid`` and ``test`` data in some (non-monolingual) corpus; both
sides of every bitext pair and all ``mw.*`` files of an aligned multi-way corpus
have the same number of lines; no file is empty.

``raw/MANIFEST.tsv`` lists every file: ``path lines bytes sha256 corpus`` and
where it came from: ``source`` (URL or path read), ``source_sha256`` (observed —
for archives without a published checksum this is the record of what was used)
and ``source_check`` (``sha256``/``md5``: verified against a published value,
``none``: not verifiable). A file fed by several archives lists them space-separated.

Last, the stage (``stages/download.py``) puts the FLORES sentencepiece models that spBLEU in ``evaluate.metrics``
needs into sacreBLEU's cache (:func:`lsnmt.data.spbleu.fetch_models`), so that the ``evaluate`` stage never
downloads.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Collection, Mapping
from pathlib import Path

from lsnmt.data import layout
from lsnmt.data.config import DataConfig, DownloadConfig, TaskSource
from lsnmt.data.sources import SOURCES, Origin, materialize, materialize_task
from lsnmt.io import DataError, atomic_dir, atomic_write, check_parallel, count_lines

log = logging.getLogger(__name__)

MANIFEST_COLUMNS = ("path", "lines", "bytes", "sha256", "corpus", "source", "source_sha256", "source_check")


def download(data: DataConfig, dl: DownloadConfig, raw_root: Path) -> None:
    """Materialize every source of ``data`` into ``raw_root`` atomically, check it, write MANIFEST.tsv."""
    cache_dir = Path(dl.cache_dir)
    monolingual = {s.name for s in data.sources if s.kind in SOURCES and SOURCES[s.kind].monolingual}
    with atomic_dir(raw_root) as tmp:
        origins: dict[Path, list[Origin]] = {}
        for src in data.sources:
            log.info("source %s (kind %s, splits %s)", src.name, src.kind, " ".join(src.splits))
            materialize(src, data, tmp, cache_dir, dl, origins=origins)
        check_coverage(data, tmp, exclude=monolingual)
        check_alignment(tmp, monolingual=monolingual)
        rows = write_manifest(tmp, origins)
    log.info("raw data: %d files in %s", rows, raw_root)


def download_tasks(tasks: Mapping[str, tuple[TaskSource, tuple[str, ...]]], dl: DownloadConfig, raw_root: Path) -> None:
    """Materialize the dataset of every task, ``{name: (source, languages)}``, into ``raw_root/tasks/{name}``
    atomically, with ``raw_root/MANIFEST.tsv``."""
    with atomic_dir(raw_root) as tmp:
        origins: dict[Path, list[Origin]] = {}
        for name, (source, languages) in tasks.items():
            log.info("task %s (kind %s, %d languages)", name, source.kind, len(languages))
            materialize_task(name, source, languages, tmp, Path(dl.cache_dir), dl, origins=origins)
        rows = write_manifest(tmp, origins)
    log.info("the tasks' raw data: %d files in %s", rows, raw_root)


def _corpora(root: Path, split: str, exclude: Collection[str]) -> list[str]:
    d = root / split
    return sorted(c.name for c in d.iterdir() if c.is_dir() and c.name not in exclude) if d.is_dir() else []


def check_coverage(data: DataConfig, root: Path, *, exclude: Collection[str] = ()) -> None:
    """Raise DataError naming the first directions (and split) that no corpus provides."""
    missing: list[str] = []
    for split, directions in (("train", data.train_pairs), ("valid", data.eval_pairs), ("test", data.eval_pairs)):
        corpora = _corpora(root, split, exclude)
        for src, tgt in directions:
            if not any(layout.find_pair(root, split, c, src, tgt) for c in corpora):
                missing.append(f"{split} {src}-{tgt}")
    if missing:
        more = f" (and {len(missing) - 5} more)" if len(missing) > 5 else ""
        raise DataError(f"no data for direction {missing[0].split()[1]} in split {missing[0].split()[0]}: "
                        f"missing {', '.join(missing[:5])}{more}; check the sources' splits and languages "
                        "in params.yaml (the download log names what each source lacked)")


def check_alignment(root: Path, *, monolingual: Collection[str] = ()) -> None:
    """Both sides of each bitext pair, and all files of an aligned multi-way corpus, have equal line counts."""
    splits = [d for d in root.iterdir() if d.is_dir() and d.name != layout.TASKS]
    for corpus_dir in sorted(d for split in splits for d in split.iterdir() if d.is_dir()):
        files = sorted(f for f in corpus_dir.iterdir() if f.is_file())
        for f in files:
            if f.stat().st_size == 0:
                raise DataError(f"{f} is empty")
        pairs: dict[str, list[Path]] = {}
        for f in files:
            stem, _, _ = f.name.rpartition(".")
            pairs.setdefault(stem, []).append(f)
        for stem, group in pairs.items():
            if stem == "mw":
                if corpus_dir.name not in monolingual:
                    _same_length(group)
            elif len(group) != 2:
                names = ", ".join(g.name for g in group)
                raise DataError(f"{corpus_dir}: pair {stem} has {len(group)} file(s) ({names}), expected 2")
            else:
                check_parallel(*group)


def _same_length(files: list[Path]) -> None:
    counts = {f: count_lines(f) for f in files}
    if len(set(counts.values())) > 1:
        shown = ", ".join(f"{f.name}: {n}" for f, n in counts.items())
        raise DataError(f"multi-way files of {files[0].parent} differ in length ({shown})")


def write_manifest(root: Path, origins: dict[Path, list[Origin]]) -> int:
    """Write ``root/MANIFEST.tsv`` (one row per file, sorted by path); return the number of rows."""
    files = sorted((f for f in root.rglob("*") if f.is_file() and f.name != "MANIFEST.tsv"),
                   key=lambda f: f.relative_to(root).as_posix())
    with atomic_write(root / "MANIFEST.tsv") as out:
        out.write("\t".join(MANIFEST_COLUMNS) + "\n")
        for f in files:
            rel = f.relative_to(root)
            used = origins.get(f, [])
            with open(f, "rb") as fh:
                sha = hashlib.file_digest(fh, "sha256").hexdigest()
            row = (rel.as_posix(), str(count_lines(f)), str(f.stat().st_size), sha,
                   rel.parts[1] if len(rel.parts) > 2 else "-",
                   " ".join(o.source for o in used) or "-", " ".join(o.sha256 for o in used) or "-",
                   " ".join(o.check for o in used) or "-")
            out.write("\t".join(row) + "\n")
    return len(files)
