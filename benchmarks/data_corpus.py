"""Synthetic corpora for ``benchmarks/data.py``, written in chunks so that the generator stays small at any size.

* :func:`write_bitext`: an English-centric corpus of 8 languages in the embedded source format
  (``lsnmt.data.sources.embedded``): Tatoeba folders ``synth/eng-XXX/test.{eng,XXX}`` with unequal pair sizes
  (sampling has work to do), 2% repeated pairs (dedup has work to do), and FLORES folders
  ``flores/{dev,devtest}/{code}.{dev,devtest}`` for valid / test;
* :func:`write_mc4`: mC4-like documents (3-30 sentences on one line) as gzipped JSON shards named as
  ``lsnmt.data.sources.mc4`` reads them from a ``path:`` directory.

Words are Zipf-distributed pseudo-words over a script of each language (Latin with accents, Cyrillic, Hebrew,
Devanagari), so that normalisation and sentencepiece see non-ASCII text.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from lsnmt.data.sources.mc4 import MC4_CODES, SHARDS
from lsnmt.languages import flores_code

LANGS = ("en", "de", "fr", "ru", "tr", "he", "hi", "vi")
SHARES = {"de": 0.30, "fr": 0.25, "ru": 0.16, "tr": 0.12, "he": 0.08, "hi": 0.06, "vi": 0.03}
"""Share of the corpus's pairs of each en-X pair (a 10x spread, as OPUS-100's)."""
SCRIPTS = {
    "ru": "абвгдежзийклмнопрстуфхцчшщыэюя",
    "he": "אבגדהוזחטיכלמנסעפצקרשת",
    "hi": "कखगघचछजझटडणतथदधनपफबभमयरलवशसह",
    "de": "abcdefghijklmnopqrstuvwxyzäöüß",
    "fr": "abcdefghijklmnopqrstuvwxyzéèàçê",
    "tr": "abcdefghijklmnoprstuvyzçğıöşü",
    "vi": "abcdeghiklmnopqrstuvxyăâđêôơư",
}
VOCAB, CHUNK, REPEATS = 20_000, 50_000, 0.02


def code3(lang: str) -> str:
    """The Tatoeba folder code the embedded source looks for (the FLORES-200 code's language part)."""
    return flores_code(lang).split("_")[0]


def vocabulary(lang: str, rng: np.random.Generator) -> list[str]:
    letters = SCRIPTS.get(lang, "abcdefghijklmnopqrstuvwxyz")
    lengths = rng.integers(2, 10, size=VOCAB)
    picks = rng.integers(0, len(letters), size=int(lengths.sum()))
    out, pos = [], 0
    for k in lengths.tolist():
        out.append("".join(letters[i] for i in picks[pos : pos + k]))
        pos += k
    return out


def sentences(vocab: list[str], lengths: np.ndarray, rng: np.random.Generator) -> list[str]:
    """One sentence of ``lengths[i]`` Zipf-distributed words per entry."""
    ids = (rng.zipf(1.3, size=int(lengths.sum())) % VOCAB).tolist()
    out, pos = [], 0
    for k in lengths.tolist():
        out.append(" ".join([vocab[i] for i in ids[pos : pos + k]]))
        pos += k
    return out


def _pair_chunks(
    n: int, vocab_en: list[str], vocab_x: list[str], rng: np.random.Generator
) -> Iterator[tuple[list[str], list[str]]]:
    for start in range(0, n, CHUNK):
        k = min(CHUNK, n - start)
        lengths = rng.integers(5, 41, size=k)
        en, x = sentences(vocab_en, lengths, rng), sentences(vocab_x, lengths, rng)
        for i in np.flatnonzero(rng.random(k) < REPEATS).tolist():  # a repeat of an earlier pair of the chunk
            j = int(rng.integers(0, i)) if i else 0
            en[i], x[i] = en[j], x[j]
        yield en, x


def _write_lines(path: Path, lines: list[str], mode: str = "a") -> None:
    with open(path, mode, encoding="utf-8", newline="\n") as fh:
        fh.writelines(s + "\n" for s in lines)


def write_bitext(root: Path, pairs: int, seed: int = 0, eval_lines: int = 1000) -> dict[str, int]:
    """Write ``root/synth`` (training pairs) and ``root/flores`` (valid / test); return pairs per en-X pair."""
    rng = np.random.default_rng(seed)
    vocabs = {lang: vocabulary(lang, rng) for lang in LANGS}
    sizes = {x: max(1, int(pairs * share)) for x, share in SHARES.items()}
    for x, n in sizes.items():
        d = root / "synth" / f"eng-{code3(x)}"
        d.mkdir(parents=True, exist_ok=True)
        for f in (d / "test.eng", d / f"test.{code3(x)}"):
            f.write_bytes(b"")
        for en, xs in _pair_chunks(n, vocabs["en"], vocabs[x], rng):
            _write_lines(d / "test.eng", en)
            _write_lines(d / f"test.{code3(x)}", xs)
    for sub in ("dev", "devtest"):
        d = root / "flores" / sub
        d.mkdir(parents=True, exist_ok=True)
        lengths = rng.integers(5, 41, size=eval_lines)
        for lang in LANGS:
            _write_lines(d / f"{flores_code(lang)}.{sub}", sentences(vocabs[lang], lengths, rng), "w")
    return sizes


def shard_name(lang: str, split: str) -> str:
    """The first shard's file name of ``lang`` (``lsnmt.data.sources.mc4.shard_url``'s basename)."""
    code = MC4_CODES.get(lang, lang)
    train, valid = SHARDS[code]
    suffix, n = ("", train) if split == "train" else ("-validation", valid)
    return f"c4-{code}{suffix}.tfrecord-00000-of-{n:05d}.json.gz"


def _documents(vocab: list[str], n: int, rng: np.random.Generator) -> Iterator[str]:
    for start in range(0, n, CHUNK // 10):
        k = min(CHUNK // 10, n - start)
        per_doc = rng.integers(3, 31, size=k)
        flat = sentences(vocab, rng.integers(5, 41, size=int(per_doc.sum())), rng)
        docs, pos = [], 0
        for m in per_doc.tolist():
            docs.append(". ".join(flat[pos : pos + m]) + ".")
            pos += m
        for i in np.flatnonzero(rng.random(k) < REPEATS).tolist():  # a repeat of an earlier document of the chunk
            docs[i] = docs[int(rng.integers(0, i)) if i else 0]
        yield from docs


def write_mc4(root: Path, docs: int, seed: int = 1, valid_docs: int = 200) -> dict[str, int]:
    """Write one training and one validation shard per language into ``root``; return documents per language
    (the training shards share ``docs`` as the bitext shares its pairs; English has the largest share)."""
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    shares = {"en": 0.3, **{x: 0.7 * s for x, s in SHARES.items()}}
    sizes = {x: max(valid_docs, int(docs * s)) for x, s in shares.items()}
    for lang, n in sizes.items():
        vocab = vocabulary(lang, rng)
        for split, count in (("train", n), ("valid", valid_docs)):
            with gzip.open(root / shard_name(lang, split), "wt", encoding="utf-8", compresslevel=1) as fh:
                for i, text in enumerate(_documents(vocab, count, rng)):
                    fh.write(
                        json.dumps({"text": text, "url": f"https://example.org/{lang}/{i}"}, ensure_ascii=False) + "\n"
                    )
    return sizes


if __name__ == "__main__":  # benchmarks/data.py runs: data_corpus.py ROOT PAIRS DOCS VALID_DOCS
    out, n_pairs, n_docs, n_valid = Path(sys.argv[1]), *map(int, sys.argv[2:5])
    write_bitext(out, n_pairs)
    write_mc4(out / "mc4", n_docs, valid_docs=n_valid)
