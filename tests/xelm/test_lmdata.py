"""Monolingual text through prepare / sample / spm, and the lm_data stage's documents and shards."""

from __future__ import annotations

import json
from pathlib import Path

import sentencepiece as spm

from lsnmt.data.prepare import prepare
from lsnmt.data.sample import sample
from lsnmt.data.spm import language_texts
from lsnmt.experiment.params import Experiment
from lsnmt.typed import build
from lsnmt.xelm.corpus import shard
from lsnmt.xelm.lmdata import build_lm_data, tokenizer


def _exp(directions: str) -> Experiment:
    raw = {"name": "t", "data": {"languages": ["en", "de", "sw"], "train_directions": directions,
                                 "eval_directions": "none",
                                 "sources": [{"name": "mc4", "kind": "mc4", "languages": ["sw"],
                                              "splits": ["train", "valid"]},
                                             {"name": "tat", "kind": "local", "path": "x", "languages": ["en", "de"],
                                              "splits": ["train"]}]},
           "spm": {"vocab_size": 60, "sentences_per_language": 100, "threads": 1},
           "lm_data": {"languages": ["en", "de"], "targets": ["sw"], "valid_docs": 2, "vocab_size": 60,
                       "spm_sentences": 100},
           "xelm": {"lm": {"embed_dim": 8, "ffn_dim": 8, "heads": 2, "layers": 1, "block_size": 8},
                    "seed": {"updates": 1, "batch_tokens": 8, "lr": 0.1},
                    "experts": {"updates": 1, "batch_tokens": 16, "lr": 0.1, "k": [2], "main_k": 2},
                    "ensemble": {"top_m": [1]},
                    "hmr": {"updates": 1, "batch_tokens": 8}}}
    return build(Experiment, raw, "experiments.t")


def _raw(root: Path) -> Path:
    raw = root / "raw"
    for split, lines in (("train", ["Habari  yako", "", "Habari  yako", "ﬁ Asante sana"]),
                         ("valid", ["Jambo", "Karibu  sana", "Lala salama"])):
        (raw / split / "mc4").mkdir(parents=True)
        (raw / split / "mc4" / "mw.sw").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return raw


def test_prepare_keeps_monolingual_documents(tmp_path: Path) -> None:
    exp = _exp("none")
    report = prepare(exp, _raw(tmp_path), tmp_path / "prepared")
    mono = tmp_path / "prepared" / "mono"
    assert (mono / "train" / "mc4.sw").read_text() == "Habari yako\nfi Asante sana\n"  # NFKC, spaces, dedup, empty
    assert report["mono"]["train"]["mc4"]["sw"]["dropped"] == {"duplicate": 1, "empty": 1}
    assert (mono / "valid" / "mc4.sw").read_text() == "Jambo\nKaribu  sana\nLala salama\n"  # as released
    assert list(language_texts(exp, tmp_path / "prepared")) == ["sw"]  # spm sees the documents
    stats = sample(exp, tmp_path / "prepared", tmp_path / "sampled")
    assert stats == {} and json.loads((tmp_path / "sampled" / "sampling.json").read_text())["directions"] == {}


def test_lm_data_documents_and_shards(tmp_path: Path) -> None:
    exp = _exp("en-centric")
    prepared = tmp_path / "prepared"
    prepare(_exp("none"), _raw(tmp_path), prepared)  # the mono part; the bitext is written below
    for s, t, side in (("en", "de", ["Guten Tag", "Danke", "Guten Tag"]), ("de", "en", ["Good day", "Thanks",
                                                                                          "Good day"])):
        d = prepared / "train" / f"{s}-{t}"
        d.mkdir(parents=True)
        (d / "tat.tgt").write_text("\n".join(side) + "\n")
        (d / "tat.src").write_text("\n".join(f"<2{t}> x" for _ in side) + "\n")
    (prepared / "valid").mkdir()
    (prepared / "valid" / "en-de.tgt").write_text("Hallo\nWelt\nNoch\n")
    (prepared / "valid" / "de-en.tgt").write_text("Hello\nWorld\nMore\n")
    assert exp.lm_data is not None
    meta = build_lm_data(exp.data, exp.spm, exp.lm_data, prepared, tmp_path / "no-shared-spm", tmp_path / "lm")
    lm = tmp_path / "lm"
    assert meta["languages"] == ["en", "de"] and meta["targets"] == ["sw"]
    assert meta["docs"]["train"] == {"en": 2, "de": 2, "sw": 2} and meta["docs"]["valid"]["de"] == 2
    assert (lm / "train" / "de.txt").read_text() == "Guten Tag\nDanke\n"  # repeats dropped
    assert meta["bytes"]["train"]["de"] == len(b"Guten Tag\nDanke\n")  # x-elm Table 5: the text's UTF-8 size
    assert meta["bytes"]["valid"]["en"] == (lm / "valid" / "en.txt").stat().st_size
    assert json.loads((lm / "meta.json").read_text())["bytes"] == meta["bytes"]
    assert (lm / "valid" / "en.txt").read_text() == "Hello\nWorld\n"  # the first valid_docs documents
    sp = tokenizer(lm)
    assert isinstance(sp, spm.SentencePieceProcessor) and (lm / "spm" / "spm.model").is_file()
    s = shard(lm, "train", "sw", meta["vocab_size"])
    assert [s[i].tolist() for i in range(len(s))] == sp.encode(["Habari yako", "fi Asante sana"])
    # the LM tokenizer is trained on the pretraining languages only: the HMR target stays unseen (x-elm Sec. 6.3)
    assert set(json.loads((lm / "spm" / "symbols.json").read_text())["sentences_per_language"]) == {"en", "de"}
