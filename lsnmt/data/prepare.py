"""The ``prepare`` stage: clean training bitext, tag sources, lay out the splits.

Training pairs go through, in order (the first failing check names the reason):

1. Unicode normalisation (``prepare.normalization``, NFKC by default) and
   whitespace collapsing;
2. ``empty``: a side shorter than ``min_chars``;
3. ``too_long``: a side longer than ``max_chars`` characters or ``max_words``
   (whitespace tokens, or characters / 4 for languages written without spaces);
4. ``duplicate``: a (source, target) pair already kept for this corpus;
5. ``heldout_overlap``: a corpus with ``heldout`` pairs gives them to its test set ``test.{corpus}`` and drops
   the training pairs that share a side with them (:mod:`lsnmt.data.heldout`).

No length-ratio filter runs here: a ratio of characters drops ordinary Chinese and Japanese pairs (one character
can carry a word), and none of the papers filters so. M2M-100's ratio over SentencePiece pieces (LSL's
preprocessing) runs in the ``sample`` stage, once the ``spm`` model exists (``sample.max_piece_ratio``,
:mod:`lsnmt.data.clean`).

Each unordered pair is read once and written to both of its directions. The
valid, test and multi-way splits are never filtered or normalised (scores are
computed against the references as released); their sources only get tags.
Counts of kept and dropped lines per direction, corpus and reason go to
``report.json``.

Every split loses its NUL bytes and byte-order marks (U+FEFF, anywhere in a
line): ``report.json``'s ``removed`` counts them per raw file
(``{"train/tatoeba/en-de.de": {"nul": 2, "bom": 1}}``).

Monolingual corpora (sources whose kind is ``monolingual``, e.g. mC4 for x-elm)
go to ``mono/{split}/{corpus}.{lang}``, one document per line: training
documents are normalised, dropped when ``empty`` (shorter than ``min_chars``) or
``duplicate``; the length filters are for sentence pairs and do not apply to
documents. Their valid / test documents are copied as released.
"""

from __future__ import annotations

import logging
import unicodedata
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

from lsnmt.data import layout
from lsnmt.data.config import PrepareConfig, PrepareView, SourceConfig
from lsnmt.data.dedup import Seen, chunks
from lsnmt.data.heldout import chosen, training_pairs
from lsnmt.data.tags import add_tags, tag_tokens
from lsnmt.io import DataError, atomic_dir, check_parallel, iter_lines, write_json
from lsnmt.languages import UNSPACED
from lsnmt.runner.progress import progress

log = logging.getLogger(__name__)

REASONS = ("empty", "too_long", "duplicate", "heldout_overlap")
JUNK = {"nul": "\x00", "bom": "\ufeff"}
"""Characters removed from every line read, by their name in ``report.json``'s ``removed``."""
Removed = dict[str, dict[str, int]]


def normalize(line: str, form: str) -> str:
    return _normalized(line, form)[0]


def _normalized(line: str, form: str) -> tuple[str, int]:
    """:func:`normalize`'s line and its count of whitespace tokens (one split for both)."""
    if form != "none":
        line = unicodedata.normalize(form, line)
    words = line.split()
    return " ".join(words), len(words)


def length(line: str, lang: str) -> int:
    """Length in words: whitespace tokens, or characters / 4 for unspaced scripts."""
    return len(line) // 4 if lang in UNSPACED else len(line.split())


def reject_reason(a: str, b: str, la: str, lb: str, cfg: PrepareConfig) -> str | None:
    """Why the pair (a, b) is dropped, or ``None`` to keep it (duplicates are checked by the caller)."""
    return _reason(a, b, length(a, la), length(b, lb), cfg)


def _reason(a: str, b: str, words_a: int, words_b: int, cfg: PrepareConfig) -> str | None:
    if len(a) < cfg.min_chars or len(b) < cfg.min_chars:
        return "empty"
    if max(len(a), len(b)) > cfg.max_chars or words_a > cfg.max_words or words_b > cfg.max_words:
        return "too_long"
    return None


def read_text(path: Path, errors: str, removed: Removed, counter: list[int] | None = None) -> Iterator[str]:
    """The lines of ``path`` (:func:`~lsnmt.io.iter_lines`) without :data:`JUNK`; once read to the end, the
    counts go to ``removed`` under ``{split}/{corpus}/{file}`` (a file read twice is counted once)."""
    counts = dict.fromkeys(JUNK, 0)
    for line in iter_lines(path, errors=errors, counter=counter):
        for name, char in JUNK.items():
            if char in line:
                counts[name] += line.count(char)
                line = line.replace(char, "")
        yield line
    if any(counts.values()):
        removed["/".join(path.parts[-3:])] = counts


def read_pairs(fa: Path, fb: Path, cfg: PrepareConfig, repaired: list[int], removed: Removed
               ) -> Iterator[tuple[str, str]]:
    check_parallel(fa, fb)
    yield from zip(read_text(fa, cfg.invalid_utf8, removed, repaired),
                   read_text(fb, cfg.invalid_utf8, removed, repaired), strict=True)


def clean_pair(view: PrepareView, src: SourceConfig, a: str, b: str, files: tuple[Path, Path],
               outs: dict[tuple[str, str], Path], removed: Removed) -> dict:
    """Clean one corpus of the unordered pair a-b into each requested direction; return its counts. Memory does
    not grow with the corpus: pairs go through a chunk at a time, repeats are found in 8 bytes a kept pair
    (:mod:`lsnmt.data.dedup`), and a corpus with ``heldout`` pairs keeps its pairs in a scratch file until the
    held-out set is drawn."""
    cfg = view.prepare
    seen = Seen() if cfg.dedup else None
    dropped: Counter[str] = Counter()
    repaired, n_in, n_kept, held = [0], 0, 0, 0
    with ExitStack() as stack:
        writers = {}
        for (s, t), d in outs.items():
            pre, suf = tag_tokens(view.data.tags, s, t, view.data.pivot)
            fs = stack.enter_context(open(d / f"{src.name}.src", "w", encoding="utf-8", newline="\n"))
            ft = stack.enter_context(open(d / f"{src.name}.tgt", "w", encoding="utf-8", newline="\n"))
            writers[(s, t)] = (fs, ft, pre, suf)
        scratch = next(iter(outs.values())) / f".{src.name}.kept"  # inside the stage's temporary folder
        kept_file = stack.enter_context(open(scratch, "w", encoding="utf-8", newline="\n")) if src.heldout else None
        for chunk in chunks(read_pairs(*files, cfg, repaired, removed)):
            n_in += len(chunk)
            for x, y in _clean_chunk(chunk, a, b, cfg, seen, dropped):
                n_kept += 1
                if kept_file is not None:
                    kept_file.write(f"{x}\t{y}\n")  # normalised text holds no tab or newline
                else:
                    _write_pair(writers, a, x, y, src.tag)
        if kept_file is not None:
            kept_file.close()
            n_kept, held, dropped["heldout_overlap"] = _hold_out(view, src, (a, b), files[0], scratch, n_kept,
                                                                 writers, outs)
            scratch.unlink()
    return {"input": n_in, "kept": n_kept,
            "dropped": {r: dropped[r] for r in REASONS if r != "heldout_overlap" or src.heldout},
            "utf8_replaced": repaired[0], **({"heldout": held} if src.heldout else {})}


def _clean_chunk(chunk: list[tuple[str, str]], a: str, b: str, cfg: PrepareConfig, seen: Seen | None,
                 dropped: Counter[str]) -> list[tuple[str, str]]:
    """The pairs of ``chunk`` that pass normalisation, the length filters and (``seen``) dedup, in order."""
    out, form, unspaced_a, unspaced_b = [], cfg.normalization, a in UNSPACED, b in UNSPACED
    for x, y in chunk:
        (x, wx), (y, wy) = _normalized(x, form), _normalized(y, form)
        reason = _reason(x, y, len(x) // 4 if unspaced_a else wx, len(y) // 4 if unspaced_b else wy, cfg)
        if reason:
            dropped[reason] += 1
        else:
            out.append((x, y))
    if seen is None or not out:
        return out
    repeats = seen.repeats([f"{x}\t{y}" for x, y in out]).tolist()
    dropped["duplicate"] += sum(repeats)
    return [p for p, r in zip(out, repeats, strict=True) if not r]


def _split(line: str) -> tuple[str, str]:
    """A scratch line ``x<TAB>y[<LF>]`` as the pair (x, y)."""
    x, _, y = line.rstrip("\n").partition("\t")
    return x, y


def _kept_pairs(scratch: Path) -> Iterator[tuple[str, str]]:
    return (_split(line) for line in iter_lines(scratch))


def _hold_out(view: PrepareView, src: SourceConfig, pair: tuple[str, str], raw: Path, scratch: Path, n_kept: int,
              writers: dict, outs: dict[tuple[str, str], Path]) -> tuple[int, int, int]:
    """Draw the held-out pairs of the ``n_kept`` in ``scratch`` (:mod:`lsnmt.data.heldout`), write them and the
    training pairs left; return (training pairs, held-out pairs, training pairs dropped for sharing a side)."""
    a, b = pair
    pick = chosen(n_kept, src.heldout or 0, src.name, a, b)
    with open(scratch, "rb") as fh:  # only the picked lines decoded
        held = [_split(raw.decode()) for i, raw in enumerate(fh) if i in pick]
    if not held:
        raise DataError(f"{raw}: {n_kept} pairs kept for {a}-{b}, too few to hold out a test set "
                        f"(sources.{src.name}.heldout needs at least 4)")
    n_train = 0
    for x, y in training_pairs(_kept_pairs(scratch), pick, held):
        _write_pair(writers, a, x, y, src.tag)
        n_train += 1
    heldout_out(view, src, a, b, held, outs)
    return n_train, len(held), n_kept - len(held) - n_train


def _write_pair(writers: dict, a: str, x: str, y: str, tag: str | None) -> None:
    for (s, _t), (fs, ft, pre, suf) in writers.items():
        xs, yt = (x, y) if s == a else (y, x)
        fs.write(add_tags(xs, pre, suf, tag) + "\n")
        ft.write(yt + "\n")


def heldout_out(view: PrepareView, src: SourceConfig, a: str, b: str, held: list[tuple[str, str]],
                outs: dict[tuple[str, str], Path]) -> None:
    """Write the held-out pairs of ``a-b`` as ``test.{corpus}/{s}-{t}.{src,tgt}`` beside ``train/``, for each
    direction (sources tagged as in the test split)."""
    d = next(iter(outs.values())).parent.parent / f"test.{src.name}"  # outs are {root}/train/{s}-{t}
    d.mkdir(parents=True, exist_ok=True)
    for s, t in outs:
        pre, suf = tag_tokens(view.data.tags, s, t, view.data.pivot)
        with open(d / f"{s}-{t}.src", "w", encoding="utf-8", newline="\n") as fs, \
                open(d / f"{s}-{t}.tgt", "w", encoding="utf-8", newline="\n") as ft:
            for x, y in held:
                xs, yt = (x, y) if s == a else (y, x)
                fs.write(add_tags(xs, pre, suf, src.tag) + "\n")
                ft.write(yt + "\n")


def prepare_train(view: PrepareView, raw: Path, out: Path, removed: Removed) -> dict:
    report: dict = {}
    read: dict[str, list[str]] = {}
    todo = set(view.data.train_pairs)
    for src in (s for s in view.data.sources if "train" in s.splits):
        for s, t in progress(sorted(todo), f"prepare {src.name}", unit="pair"):
            if (t, s) in todo and t < s:
                continue  # handled together with (t, s)
            files = layout.find_pair(raw, "train", src.name, s, t)
            if files is None:
                continue
            dirs = {d: out / "train" / f"{d[0]}-{d[1]}" for d in ((s, t), (t, s)) if d in todo}
            for d in dirs.values():
                d.mkdir(parents=True, exist_ok=True)
            counts = clean_pair(view, src, s, t, files, dirs, removed)
            for d in dirs:
                report.setdefault(f"{d[0]}-{d[1]}", {})[src.name] = counts
                read.setdefault(f"{d[0]}-{d[1]}", []).append(_dropped(files[0].with_suffix(".*"), counts))
            log.info("train %s-%s %s: kept %d of %d", s, t, src.name, counts["kept"], counts["input"])
    for s, t in sorted(todo):
        kept = sum(c["kept"] for c in report.get(f"{s}-{t}", {}).values())
        if kept == 0:
            why = "; ".join(read.get(f"{s}-{t}", [])) or f"no corpus under {raw / 'train'} has this pair"
            raise DataError(f"no training data left for direction {s}-{t} in {raw}: {why}; "
                            f"check data.sources and the prepare filters")
    return report


def _dropped(files: Path, counts: dict) -> str:
    """``raw/train/c/en-de.*: 3 pairs, dropped 2 empty, 1 too_long``: why a corpus gave a direction nothing."""
    reasons = ", ".join(f"{n} {r}" for r, n in counts["dropped"].items() if n) or "none"
    return f"{files}: {counts['input']} pairs, dropped {reasons}"


def prepare_eval(view: PrepareView, raw: Path, out: Path, split: str, removed: Removed) -> dict:
    """Copy one evaluation split, tagging sources; error if a direction has no data."""
    counts = {}
    for s, t in view.data.eval_pairs:
        found = [(src, f) for src in view.data.sources if split in src.splits
                 if (f := layout.find_pair(raw, split, src.name, s, t))]
        if not found:
            raise DataError(f"no {split} data for direction {s}-{t} in {raw}")
        src, (fs, ft) = found[0]
        n = check_parallel(fs, ft)
        if n == 0:
            raise DataError(f"{fs}: empty {split} file for direction {s}-{t}")
        pre, suf = tag_tokens(view.data.tags, s, t, view.data.pivot)
        d = out / split
        d.mkdir(parents=True, exist_ok=True)
        with open(d / f"{s}-{t}.src", "w", encoding="utf-8", newline="\n") as fo:
            for line in read_text(fs, view.prepare.invalid_utf8, removed):
                fo.write(add_tags(line, pre, suf, src.tag) + "\n")
        with open(d / f"{s}-{t}.tgt", "w", encoding="utf-8", newline="\n") as fo:
            for line in read_text(ft, view.prepare.invalid_utf8, removed):
                fo.write(line + "\n")
        counts[f"{s}-{t}"] = {"corpus": src.name, "lines": n}
    return counts


def prepare_multiway(view: PrepareView, raw: Path, out: Path, removed: Removed) -> dict:
    counts = {}
    for src in (s for s in view.data.sources if "multiway" in s.splits):
        lines = {}
        for lang in src.languages or view.data.languages:
            f = layout.multiway(raw, "multiway", src.name, lang)
            if not f.exists():
                raise DataError(f"{f}: multi-way corpus {src.name!r} has no file for {lang!r}")
            dst = out / "multiway" / f"{src.name}.{lang}"
            dst.parent.mkdir(parents=True, exist_ok=True)
            with open(dst, "w", encoding="utf-8", newline="\n") as fo:
                lines[lang] = sum(fo.write(x + "\n") > 0 for x in read_text(f, view.prepare.invalid_utf8, removed))
        if len(set(lines.values())) > 1:
            raise DataError(f"multi-way corpus {src.name!r} is not aligned: line counts {lines}")
        counts[src.name] = lines
    return counts


def _mono_train(src: Path, dst: Path, cfg: PrepareConfig, removed: Removed) -> dict:
    seen = Seen() if cfg.dedup else None
    dropped: Counter[str] = Counter()
    repaired, n_in, n_kept = [0], 0, 0
    with open(dst, "w", encoding="utf-8", newline="\n") as fo:
        for chunk in chunks(read_text(src, cfg.invalid_utf8, removed, repaired)):
            n_in += len(chunk)
            lines = [x for x in (normalize(line, cfg.normalization) for line in chunk) if len(x) >= cfg.min_chars]
            dropped["empty"] += len(chunk) - len(lines)
            if seen is not None and lines:
                repeats = seen.repeats(lines).tolist()
                dropped["duplicate"] += sum(repeats)
                lines = [x for x, r in zip(lines, repeats, strict=True) if not r]
            n_kept += len(lines)
            fo.writelines(x + "\n" for x in lines)
    return {"input": n_in, "kept": n_kept, "dropped": {r: n for r, n in sorted(dropped.items()) if n},
            "utf8_replaced": repaired[0]}


def prepare_monolingual(view: PrepareView, raw: Path, out: Path, removed: Removed) -> dict:
    """Documents of the monolingual corpora into ``mono/{split}/{corpus}.{lang}``; return their counts."""
    from lsnmt.data.sources import SOURCES  # lazy: the catalogue imports every source module

    counts: dict = {}
    for src in view.data.sources:
        if src.kind not in SOURCES or not SOURCES[src.kind].monolingual:
            continue
        for split in (s for s in src.splits if s != "multiway"):
            for lang in src.languages or view.data.languages:
                f = layout.multiway(raw, split, src.name, lang)
                if not f.exists():
                    raise DataError(f"{f}: monolingual corpus {src.name!r} has no {split} file for {lang!r}")
                dst = out / "mono" / split / f"{src.name}.{lang}"
                dst.parent.mkdir(parents=True, exist_ok=True)
                if split == "train":
                    c = _mono_train(f, dst, view.prepare, removed)
                else:
                    with open(dst, "w", encoding="utf-8", newline="\n") as fo:
                        n = sum(fo.write(x + "\n") > 0 for x in read_text(f, view.prepare.invalid_utf8, removed))
                    c = {"input": n, "kept": n}
                counts.setdefault(split, {}).setdefault(src.name, {})[lang] = c
                log.info("mono %s %s %s: kept %d of %d", split, src.name, lang, c["kept"], c["input"])
    return counts


def prepare(view: PrepareView, raw: Path, out: Path) -> dict:
    """Run the whole stage into ``out`` atomically; return the report (also written to report.json)."""
    removed: Removed = {}
    with atomic_dir(out) as tmp:
        report = {"train": prepare_train(view, raw, tmp, removed)}
        for split in ("valid", "test"):
            if view.data.eval_pairs:
                report[split] = prepare_eval(view, raw, tmp, split, removed)
        report["multiway"] = prepare_multiway(view, raw, tmp, removed)
        report["mono"] = prepare_monolingual(view, raw, tmp, removed)
        report["removed"] = dict(sorted(removed.items()))
        write_json(tmp / "report.json", report)
    return report
