"""The in-context evaluation datasets of x-elm Sec. 7 in their published formats, and how to obtain them.

===========  ==========================================================  ==================================
task         published file (fetched with :func:`lsnmt.data.fetch.fetch`)  evaluation / demonstrations
===========  ==========================================================  ==================================
xnli         https://dl.fbaipublicfiles.com/XNLI/XNLI-1.0.zip             ``xnli.test.tsv`` / ``xnli.dev.tsv``
             (Conneau et al. 2018; 15 languages)                          (x-elm Sec. 7.1)
xstorycloze  https://dl.fbaipublicfiles.com/xstorycloze.zip (Lin et al.   ``…split_20_80_eval.tsv`` /
             2022; 10 languages, English StoryCloze by request only)      ``…split_20_80_train.tsv``
pawsx        https://storage.googleapis.com/paws/pawsx/x-final.tar.gz     ``{lang}/dev_2k.tsv`` / ``en/train.tsv``
             (Yang et al. 2019; 7 languages)                              (App. A.2)
===========  ==========================================================  ==================================

``icl.path/{task}/`` holds the extracted files (any directory layout: files are found by name, PAWS-X's by
``{lang}/{name}``). If it is missing, the archive ``icl.path/{archive name}`` is extracted; if that is missing
too and ``icl.download`` is set, it is downloaded first (no checksums are published: the observed sha256 is
logged). Otherwise :class:`Unavailable` says what is missing and where to put it. An archive with a member
that would land outside its folder (an absolute name, ``..``, a link pointing out) is refused, nothing extracted.
"""

from __future__ import annotations

import csv
import logging
import shutil
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from lsnmt.data.fetch import basename, fetch
from lsnmt.io import DataError

log = logging.getLogger(__name__)

URLS = {
    "xnli": "https://dl.fbaipublicfiles.com/XNLI/XNLI-1.0.zip",
    "xstorycloze": "https://dl.fbaipublicfiles.com/xstorycloze.zip",
    "pawsx": "https://storage.googleapis.com/paws/pawsx/x-final.tar.gz",
}
LANGUAGES = {
    "xnli": ("ar", "bg", "de", "el", "en", "es", "fr", "hi", "ru", "sw", "th", "tr", "ur", "vi", "zh"),
    "xstorycloze": ("ar", "en", "es", "eu", "hi", "id", "my", "ru", "sw", "te", "zh"),
    "pawsx": ("de", "en", "es", "fr", "ja", "ko", "zh"),
}
XNLI_LABELS = {"entailment": 0, "neutral": 1, "contradiction": 2}


class Unavailable(Exception):
    """A dataset (or one language of it) is absent: the message says what to fetch and where to put it."""


@dataclass(frozen=True)
class Example:
    """One task example: ``shared`` text, the candidate continuations, the gold index, and the raw fields
    (for the TF-IDF weights of the ensemble)."""

    shared: str
    candidates: tuple[str, ...]
    label: int
    fields: tuple[str, ...]


def obtain(task: str, root: Path, download: bool, *, retries: int = 3, timeout: float = 60.0) -> Path:
    """The directory with ``task``'s extracted files (extracting or downloading as the module docstring says)."""
    target = root / task
    if target.is_dir() and any(target.rglob("*.tsv")):
        return target
    archive = root / basename(URLS[task])
    if not archive.is_file():
        if not download:
            raise Unavailable(f"{task}: neither {target}/ nor {archive} exists; fetch {URLS[task]} into {root} "
                              f"(or set xelm.icl.download: true)")
        try:
            fetch(URLS[task], archive, retries=retries, timeout=timeout)
        except DataError as exc:
            raise Unavailable(f"{task}: {exc}") from None
    _extract(archive, target)
    return target


def _inside(name: str, root: Path) -> bool:
    """Whether the archive member ``name`` stays below ``root`` once extracted."""
    return not name.startswith(("/", "\\")) and (root / name).resolve().is_relative_to(root.resolve())


def _refuse(archive: Path, name: str) -> DataError:
    return DataError(f"{archive}: member {name!r} would be written outside the extraction folder; refusing to "
                     "extract it (fetch the archive again from its published URL)")


def _extract(archive: Path, target: Path) -> None:
    tmp = target.with_name(target.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        if archive.name.endswith(".zip"):
            with zipfile.ZipFile(archive) as zf:
                bad = next((n for n in zf.namelist() if not _inside(n, tmp)), None)
                if bad is not None:
                    raise _refuse(archive, bad)
                zf.extractall(tmp)
        else:
            with tarfile.open(archive) as tf:
                bad = next((m.name for m in tf.getmembers() if not _inside(m.name, tmp)
                            or ((m.issym() or m.islnk()) and not _inside(
                                m.linkname if m.islnk() else str(Path(m.name).parent / m.linkname), tmp))), None)
                if bad is not None:
                    raise _refuse(archive, bad)
                tf.extractall(tmp, filter="data")
    except (DataError, tarfile.TarError, zipfile.BadZipFile) as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise DataError(str(exc) if isinstance(exc, DataError) else f"{archive}: cannot extract ({exc})") from None
    tmp.rename(target)


def _find(root: Path, suffix: str) -> Path:
    found = sorted(p for p in root.rglob("*") if p.is_file() and p.as_posix().endswith("/" + suffix))
    if not found:
        raise Unavailable(f"no file {suffix!r} under {root}")
    return found[0]


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t", quoting=csv.QUOTE_NONE))
    if not rows:
        raise DataError(f"{path}: no rows")
    return rows


def _need(path: Path, row: dict[str, str], keys: tuple[str, ...], line: int) -> None:
    missing = [k for k in keys if row.get(k) is None]
    if missing:
        raise DataError(f"{path}:{line}: missing column(s) {missing}")


def xnli(root: Path, lang: str, split: str) -> list[Example]:
    """XNLI ``{split}`` (``dev`` / ``test``) of ``lang``; "{premise}, right? {Yes|Also|No}, {hypothesis}"."""
    path = _find(root, f"xnli.{split}.tsv")
    out = []
    for n, r in enumerate(_rows(path), start=2):
        _need(path, r, ("language", "gold_label", "sentence1", "sentence2"), n)
        if r["language"] == lang:
            out.append(Example(f"{r['sentence1']}, right? ", tuple(f"{w}, {r['sentence2']}" for w in
                               ("Yes", "Also", "No")), XNLI_LABELS[r["gold_label"]], (r["sentence1"], r["sentence2"])))
    if not out:
        raise Unavailable(f"{path}: no {lang!r} rows")
    return out


def xstorycloze(root: Path, lang: str, split: str) -> list[Example]:
    """XStoryCloze ``{split}`` (``train`` / ``eval``) of ``lang``; prompt "{s1} {s2} {s3} {s4} {ending}"."""
    path = _find(root, f"spring2016.val.{lang}.tsv.split_20_80_{split}.tsv")
    keys = ("InputSentence1", "InputSentence2", "InputSentence3", "InputSentence4", "RandomFifthSentenceQuiz1",
            "RandomFifthSentenceQuiz2", "AnswerRightEnding")
    out = []
    for n, r in enumerate(_rows(path), start=2):
        _need(path, r, keys, n)
        story = tuple(r[k] for k in keys[:4])
        out.append(Example(" ".join(story) + " ", (r[keys[4]], r[keys[5]]), int(r[keys[6]]) - 1, story))
    return out


def pawsx(root: Path, lang: str, split: str) -> list[Example]:
    """PAWS-X ``{split}`` (``dev_2k`` / ``test_2k`` / ``train``) of ``lang``; "{s1}, right? {Yes|No}, {s2}" (label
    1 = paraphrase = Yes)."""
    name = "train.tsv" if split == "train" and lang == "en" else "translated_train.tsv" if split == "train" \
        else f"{split}.tsv"
    path = _find(root, f"{lang}/{name}")
    out = []
    for n, r in enumerate(_rows(path), start=2):
        _need(path, r, ("sentence1", "sentence2", "label"), n)
        if r["label"] not in ("0", "1"):
            continue  # a few translated rows are broken (empty label)
        out.append(Example(f"{r['sentence1']}, right? ", tuple(f"{w}, {r['sentence2']}" for w in ("Yes", "No")),
                           0 if r["label"] == "1" else 1, (r["sentence1"], r["sentence2"])))
    return out


SPLITS = {"xnli": ("test", "dev"), "xstorycloze": ("eval", "train"), "pawsx": ("dev_2k", "train")}
"""task -> (evaluation split, demonstration split)."""
READERS = {"xnli": xnli, "xstorycloze": xstorycloze, "pawsx": pawsx}
