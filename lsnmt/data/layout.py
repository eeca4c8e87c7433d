"""The files inside the data stages' folders and the translate / evaluate folders; the folders themselves, for one
experiment ``exp``, are :mod:`lsnmt.paths`' (declared by the stage table, resolved by the stages).

Data moves one way::

    data/{exp}/raw        download   {split}/{corpus}/{a}-{b}.{a|b}   parallel text of one language pair
                                     {split}/{corpus}/mw.{lang}       multi-way text, aligned across languages
                                     MANIFEST.tsv                     sha256 and line count of every file
    data/{exp}/prepared   prepare    train/{src}-{tgt}/{corpus}.{src,tgt}
                                     {valid,test}/{src}-{tgt}.{src,tgt}
                                     test.{corpus}/{src}-{tgt}.{src,tgt}  held-out test set of a corpus
                                     multiway/{corpus}.{lang}
                                     report.json (kept / dropped lines per direction and reason)
    data/{exp}/sampled    sample     train/{src}-{tgt}.{src,tgt} (every line once), sampling.json (the plan the
                                     trainer re-draws each epoch from)
    data/{exp}/spm        spm        spm.model, spm.vocab, symbols.json
    data/{exp}/bin        encode     {train,valid,test,test.{corpus}}/{src}-{tgt}.{src,tgt}.{bin,idx}
                                     multiway/{corpus}.{lang}.{bin,idx}, meta.json, sampling.json

The NER / QA tasks of ``task_cfg`` (``lsnmt/tasks``) keep their datasets' own formats::

    data/{exp}/task_raw/tasks/{task}  task_prep  WikiANN {lang}/{train,dev,test}; TyDiQA-GoldP *.json; MANIFEST.tsv
    data/{exp}/tasks/{task}           task_prep  tokenizer.json, {split}/{lang}.jsonl features, meta.json

Every test set (``DataConfig.test_sets``: the primary ``test`` split and ``test.{corpus}`` of each source with
``heldout`` pairs) is translated and scored. The primary one keeps the folder itself, each other one a
subfolder named after it (:func:`test_set_subdir`), so a reader of the primary layout sees no change::

    results/{exp}/translate/{method}    translate  {src}-{tgt}.hyp, test.{corpus}/{src}-{tgt}.hyp
                                                   {route}/{src}-{tgt}.hyp, {route}/test.{corpus}/…  (FD's other route)
    results/{exp}/evaluate              evaluate   {system}/{src}-{tgt}.json, {system}/test.{corpus}/{src}-{tgt}.json,
                                                   summary.json (``test_sets``: the other sets), summary.md

``{split}`` is one of train / valid / test / test.{corpus} / multiway. A bitext pair ``{a}-{b}`` is
named pivot first (``en-de``) or, between two non-pivot languages, in the order
the source catalogue uses. A direction ``{src}-{tgt}`` is ordered.
"""

from __future__ import annotations

from pathlib import Path

PRIMARY_TEST = "test"
"""The released test split (FLORES-200 devtest in ``default``): the test set every table reports first."""


def test_set_subdir(test_set: str) -> str:
    """Where in a translate or evaluate folder test set ``test_set`` lies: ``""`` (primary) or its name."""
    return "" if test_set == PRIMARY_TEST else test_set


TASKS = "tasks"
"""Folder of the task datasets inside ``task_raw`` (``task_prep`` fetches them: ``download`` reads no task)."""


def raw_task_dir(raw_root: Path, task: str) -> Path:
    return raw_root / TASKS / task


def bitext(root: Path, split: str, corpus: str, a: str, b: str) -> tuple[Path, Path]:
    """The two files of pair ``a-b`` of one corpus in the raw layout."""
    d = root / split / corpus
    return d / f"{a}-{b}.{a}", d / f"{a}-{b}.{b}"


def multiway(root: Path, split: str, corpus: str, lang: str) -> Path:
    return root / split / corpus / f"mw.{lang}"


def find_pair(root: Path, split: str, corpus: str, src: str, tgt: str) -> tuple[Path, Path] | None:
    """Source and target files for direction src->tgt in the raw layout, whichever way they are stored."""
    for a, b in ((src, tgt), (tgt, src)):
        fa, fb = bitext(root, split, corpus, a, b)
        if fa.exists() and fb.exists():
            return (fa, fb) if a == src else (fb, fa)
    ms, mt = multiway(root, split, corpus, src), multiway(root, split, corpus, tgt)
    if ms.exists() and mt.exists():
        return ms, mt
    return None
