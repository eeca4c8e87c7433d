"""The ``spm`` stage: one sentencepiece model shared by every language.

The trainer sees a balanced sample: for each language, at most
``spm.sentences_per_language`` sentences drawn uniformly (reservoir sampling,
seeded) from all its training text, sources with their tags stripped. Language
tags (``<2de>``, ``<de>``) and corpus tags are user-defined symbols, so they are
always single pieces. Ids follow fairseq's dictionary: ``<s>``=0, ``<pad>``=1,
``</s>``=2, ``<unk>``=3.
"""

from __future__ import annotations

import io
import json
import logging
import random
import re
from collections import defaultdict
from pathlib import Path

import sentencepiece as spm

from lsnmt.data.config import SpmView
from lsnmt.data.tags import lang_symbols, strip_tags, tag_tokens
from lsnmt.io import DataError, atomic_dir, iter_lines, write_json

log = logging.getLogger(__name__)

BOS, PAD, EOS, UNK = 0, 1, 2, 3


def symbols(view: SpmView) -> list[str]:
    """User-defined symbols: language tags, corpus tags, then ``spm.user_symbols``."""
    corpus_tags = [s.tag for s in view.data.sources if s.tag]
    out = lang_symbols(view.data.languages) + corpus_tags + list(view.spm.user_symbols)
    return list(dict.fromkeys(out))


def language_texts(view: SpmView, prepared: Path) -> dict[str, list[tuple[Path, tuple]]]:
    """For each language, its training files and how to strip tags from their lines.

    Both directions of a pair hold the same text, so each (pair, corpus, language)
    is read once, from the untagged target side where there is one. Monolingual
    training documents (``mono/train/{corpus}.{lang}``, e.g. mC4) count too.
    """
    files: dict[tuple, tuple[Path, tuple]] = {}
    for s, t in sorted(view.data.train_pairs, key=lambda d: d[0] == view.data.pivot):
        d = prepared / "train" / f"{s}-{t}"
        pre, suf = tag_tokens(view.data.tags, s, t, view.data.pivot)
        for src in view.data.sources:
            if (d / f"{src.name}.src").exists():
                pair = frozenset((s, t))
                files[(pair, src.name, t)] = (d / f"{src.name}.tgt", ([], [], None))
                files.setdefault((pair, src.name, s), (d / f"{src.name}.src", (pre, suf, src.tag)))
    for src in view.data.sources:
        for lang in view.data.languages:
            if (mono := prepared / "mono" / "train" / f"{src.name}.{lang}").exists():
                files[(frozenset((lang,)), src.name, lang)] = (mono, ([], [], None))
    texts: dict[str, list[tuple[Path, tuple]]] = defaultdict(list)
    for (_pair, _corpus, lang), entry in sorted(files.items(), key=lambda kv: str(kv[1][0])):
        texts[lang].append(entry)
    return texts


def balanced_sample(files: list[tuple[Path, tuple]], k: int, rng: random.Random) -> list[str]:
    """Reservoir sample (Algorithm R) of at most k lines over several files."""
    reservoir: list[str] = []
    n = 0
    for path, (pre, suf, ctag) in files:
        for line in iter_lines(path):
            n += 1
            if len(reservoir) < k:
                reservoir.append(strip_tags(line, pre, suf, ctag))
            elif (j := rng.randrange(n)) < k:
                reservoir[j] = strip_tags(line, pre, suf, ctag)
    return reservoir


def _trainer_error(message: str, vocab_size: int) -> str:
    """One line for what sentencepiece's trainer refused (its messages quote C++ checks)."""
    m = re.search(r"smaller than required_chars\. (\d+) vs (\d+)", message)
    if m:
        return (f"spm.vocab_size {vocab_size} is too small for this corpus: its characters and the symbols need "
                f"{m.group(2)} pieces (raise spm.vocab_size or lower spm.character_coverage)")
    first = " ".join(message.split())
    return f"sentencepiece could not train a {vocab_size}-piece model on this text ({first})"


def train_spm(view: SpmView, prepared: Path, out: Path) -> dict:
    """Train the shared model into ``out`` (spm.model, spm.vocab, symbols.json) atomically.

    The trainer reads the sample from memory and writes the model to memory, so no
    temporary path is recorded in the model: the same inputs give identical bytes.
    """
    cfg, texts = view.spm, language_texts(view, prepared)
    missing = [lang for lang in view.data.languages if lang not in texts]
    if missing:
        raise DataError(f"no training text for language(s) {missing} in {prepared}")
    sample, counts = [], {}
    for lang in view.data.languages:
        lines = balanced_sample(texts[lang], cfg.sentences_per_language, random.Random(f"{cfg.seed}/{lang}"))
        counts[lang] = len(lines)
        sample += lines
    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(sample), model_writer=model, vocab_size=cfg.vocab_size,
            model_type=cfg.model_type, character_coverage=cfg.character_coverage,
            user_defined_symbols=symbols(view), bos_id=BOS, pad_id=PAD, eos_id=EOS, unk_id=UNK,
            input_sentence_size=0, shuffle_input_sentence=False, hard_vocab_limit=False,
            num_threads=cfg.threads, minloglevel=2,
        )
    except RuntimeError as exc:
        raise DataError(f"{prepared}: {_trainer_error(str(exc), cfg.vocab_size)}") from None
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    vocab = sp.get_piece_size()
    if vocab < cfg.vocab_size:
        log.warning("spm: the training text supports %d pieces, fewer than spm.vocab_size %d", vocab, cfg.vocab_size)
    info = {"vocab_size": vocab, "symbols": symbols(view), "sentences_per_language": counts,
            "bos": BOS, "pad": PAD, "eos": EOS, "unk": UNK}
    with atomic_dir(out) as tmp:
        (tmp / "spm.model").write_bytes(model.getvalue())
        with open(tmp / "spm.vocab", "w", encoding="utf-8", newline="\n") as fh:
            fh.writelines(f"{sp.id_to_piece(i)}\t{sp.get_score(i):g}\n" for i in range(vocab))
        write_json(tmp / "symbols.json", info)
    log.info("spm: vocab %d from %s", vocab, json.dumps(counts))
    return info
