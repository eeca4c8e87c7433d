"""The source catalogue: every corpus kind the ``download`` stage knows, and :func:`materialize`.

``SOURCES[kind]`` is a :class:`Source` that knows its real URLs (and checksums
where they are published: see each module's docstring for what is confirmed and
what is not) and writes one corpus into the raw layout of
:mod:`lsnmt.data.layout`: ``{split}/{corpus}/{a}-{b}.{a|b}`` for bitext,
``{split}/{corpus}/mw.{lang}`` for multi-way (or, for ``mc4``, monolingual) text.
Files are split on ``\\n`` only and their bytes are kept as published.

Every kind but ``embedded`` honours the source's ``path:`` (a pre-downloaded file,
an outer archive or an extracted directory), ``url:`` + ``sha256:`` (one-archive
kinds) and ``mirror:``; downloads are cached, resumable, in ``download.cache_dir``.

===============  ==========================================================  ==========================
kind             what                                                        splits
===============  ==========================================================  ==========================
embedded         repository data (Tatoeba / FLORES-200 / NTREX-128 layouts)  train valid test multiway
opus100          OPUS-100 v1.0 English-centric (+ zero-shot test pairs)      train valid test
flores101        FLORES-101 dev / devtest, multi-way                         valid test multiway
flores200        FLORES-200 dev / devtest, multi-way                         valid test multiway
iwslt14          IWSLT 2014 TED, ar de es fa he it nl pl - en                train valid test
iwslt17          IWSLT 2017 multilingual TED, de en it nl ro                 train valid test
wmt14            WMT14 news task, cs de fr hi ru - en                        train valid test
ted_multiway     TED talks (Qi et al., 2018), fully translated rows          train valid test multiway
mc4              mC4 monolingual documents                                   train valid test
mtdata           parallel corpora by mtdata dataset name (WMT, OPUS, ...)    train valid test
local            a corpus already on disk in the raw layout (``path:``)      train valid test multiway
===============  ==========================================================  ==========================

The NER / QA tasks (``task_cfg``) have their own kinds, written in their datasets' formats under
``raw/tasks/{task}`` by :func:`materialize_task`: ``wikiann`` (Rahimi et al.'s WikiANN splits) and
``tydiqa`` (TyDiQA-GoldP), with the same ``path:`` / ``url:`` / ``sha256:`` / ``mirror:`` handling.
"""

from __future__ import annotations

import logging
from pathlib import Path

from lsnmt.data.config import DataConfig, DownloadConfig, SourceConfig, TaskSource
from lsnmt.data.sources import embedded, flores, iwslt, local, mc4, mtdata_corpora, opus100, ted, tydiqa, wikiann, wmt14
from lsnmt.data.sources.base import Context, Origin, Remote, Source, pair_key
from lsnmt.io import DataError

__all__ = ["SOURCES", "TASK_SOURCES", "Origin", "Remote", "Source", "materialize", "materialize_task", "pair_key"]

log = logging.getLogger(__name__)

SOURCES: dict[str, Source] = {
    s.kind: s
    for s in (embedded.SOURCE, opus100.SOURCE, flores.FLORES101_SOURCE, flores.FLORES200_SOURCE,
              iwslt.IWSLT14_SOURCE, iwslt.IWSLT17_SOURCE, wmt14.SOURCE, ted.SOURCE, mc4.SOURCE, mtdata_corpora.SOURCE,
              local.SOURCE)
}

TASK_SOURCES: dict[str, Source] = {s.kind: s for s in (wikiann.SOURCE, tydiqa.SOURCE)}


def materialize(
    src_cfg: SourceConfig,
    data_cfg: DataConfig,
    raw_root: Path,
    cache_dir: Path,
    dl: DownloadConfig,
    *,
    origins: dict[Path, list[Origin]] | None = None,
) -> list[Path]:
    """Fetch and unpack one corpus into ``raw_root`` (raw layout); return the files written, sorted.

    ``origins``, when given, receives for every written file the file(s) its lines were
    read from (URL or path, observed sha256, what was verified), for ``raw/MANIFEST.tsv``.
    Raises :class:`~lsnmt.io.DataError` for an unknown kind, a split the kind cannot
    provide, and any download or format problem.
    """
    source = SOURCES.get(src_cfg.kind)
    if source is None:
        raise DataError(f"source {src_cfg.name!r}: unknown kind {src_cfg.kind!r} "
                        f"(known: {', '.join(sorted(SOURCES))})")
    unknown = sorted(set(src_cfg.splits) - source.splits)
    if unknown:
        raise DataError(f"source {src_cfg.name!r}: kind {src_cfg.kind!r} has no {', '.join(unknown)} split "
                        f"(it provides {', '.join(sorted(source.splits))})")
    ctx = Context(src=src_cfg, data=data_cfg, raw_root=Path(raw_root), cache_dir=Path(cache_dir), dl=dl,
                  source=source)
    source.build(ctx)
    if origins is not None:
        origins.update(ctx.origins)
    written = sorted(p for p, n in ctx.counts.items() if p.exists())
    log.info("%s (%s): %d files, %d lines", src_cfg.name, src_cfg.kind, len(written), sum(ctx.counts.values()))
    return written


def materialize_task(name: str, source: TaskSource, languages: tuple[str, ...], raw_root: Path, cache_dir: Path,
                     dl: DownloadConfig, *, origins: dict[Path, list[Origin]] | None = None) -> list[Path]:
    """Fetch the dataset of task ``name`` (``source``, in ``languages``) into ``raw_root/tasks/{name}`` (its own
    format); return the files."""
    kind = TASK_SOURCES[source.kind]
    src_cfg = SourceConfig(name=name, kind=source.kind, languages=languages, path=source.path, url=source.url,
                           sha256=source.sha256, mirror=source.mirror)
    data = DataConfig(languages=languages, pivot=languages[0], train_directions="none", eval_directions="none",
                      sources=())  # a task names its languages: the fetch reads no experiment data
    ctx = Context(src=src_cfg, data=data, raw_root=Path(raw_root), cache_dir=Path(cache_dir), dl=dl, source=kind)
    kind.build(ctx)
    if origins is not None:
        origins.update(ctx.origins)
    written = sorted(p for p, n in ctx.counts.items() if p.exists())
    log.info("task %s (%s): %d files, %d lines", name, source.kind, len(written), sum(ctx.counts.values()))
    return written
