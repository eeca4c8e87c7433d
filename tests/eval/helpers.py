"""A tiny evaluated experiment on disk: real FLORES / NTREX lines, a small spm model, a tiny model, hypotheses."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sentencepiece as spm
import torch

from lsnmt.data.tags import add_tags, lang_symbols, tag_tokens
from lsnmt.experiment.params import Experiment
from lsnmt.languages import flores_code
from lsnmt.typed import build
from models.build import build_transformer

ROOT = Path(__file__).resolve().parents[2]
LANGS = ("en", "de", "fr")
TEST_LINES = 12
MAX_SENTENCES = 10


def flores(lang: str, n: int, split: str = "devtest") -> list[str]:
    path = ROOT / "embedded" / "flores200" / split / f"{flores_code(lang)}.{split}"
    return path.read_text(encoding="utf-8").split("\n")[:n]


def ntrex(lang: str, n: int) -> list[str]:
    return (ROOT / "embedded" / "ntrex128" / f"{flores_code(lang)}.txt").read_text(encoding="utf-8").split("\n")[:n]


def write(path: Path, lines: Iterable[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(x + "\n" for x in lines), encoding="utf-8")
    return path


METHOD_CFG = {"good": {"kind": "lms", "rank": 2}, "fd": {"kind": "fd"}}
"""Method entries of the test systems: ``good`` has one route, ``fd`` two (``fd`` and ``fd_ls``)."""


def experiment(data: dict | None = None, heldout: int = 0, **evaluate: object) -> Experiment:
    """The tiny experiment; ``heldout``: pairs of ``bitext`` held out as the test set ``test.bitext``."""
    raw = {
        "name": "tiny",
        "data": {"languages": list(LANGS), "tags": "target-prefix", **(data or {}), "sources": [
            {"name": "bitext", "kind": "embedded", "splits": ["train"], "heldout": heldout},
            {"name": "flores", "kind": "embedded", "splits": ["valid", "test"]},
            {"name": "ntrex", "kind": "embedded", "splits": ["multiway"]}]},
        "model": {"embed_dim": 16, "ffn_dim": 32, "heads": 2, "encoder_layers": 1, "decoder_layers": 1,
                  "dropout": 0.0},
        "decode": {"max_sentences": MAX_SENTENCES},
        "evaluate": {"bootstrap_samples": 200, **evaluate},
        "method_cfg": METHOD_CFG,
    }
    return build(Experiment, raw, "")


def train_spm(out: Path, lines: list[str], vocab_size: int = 300) -> None:
    model = io.BytesIO()
    symbols = lang_symbols(LANGS)
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=model, vocab_size=vocab_size,
                                   user_defined_symbols=symbols, bos_id=0, pad_id=1, eos_id=2, unk_id=3,
                                   hard_vocab_limit=False, minloglevel=2)
    out.mkdir(parents=True, exist_ok=True)
    (out / "spm.model").write_bytes(model.getvalue())
    (out / "symbols.json").write_text(json.dumps({"symbols": symbols}), encoding="utf-8")


def corrupt(line: str) -> str:
    """Drop every other word: a clearly worse but still same-language hypothesis."""
    return " ".join(line.split()[::2])


@dataclass
class World:
    exp: Experiment
    root: Path

    @property
    def results(self) -> Path:
        return self.root / "results"

    @property
    def prepared(self) -> Path:
        return self.root / "prepared"

    @property
    def spm(self) -> Path:
        return self.root / "spm"

    @property
    def bin(self) -> Path:
        return self.root / "bin"


def make_world(root: Path, exp: Experiment, methods: tuple[str, ...] = ("naive", "good")) -> World:
    """Test set of 12 FLORES lines per direction (a held-out set: 12 NTREX lines from line 30 on), hypotheses for
    the first 10: ``good`` copies the references, others drop every other word; a 30-line NTREX multi-way set;
    report.json sizes en-de 1M, en-fr 50K."""
    w = World(exp, root)
    for test_set, pairs in exp.data.test_sets.items():
        text = (lambda x: flores(x, TEST_LINES)) if test_set == "test" else (
            lambda x: ntrex(x, 30 + TEST_LINES)[30:])
        sub = "" if test_set == "test" else test_set
        for s, t in pairs:
            pre, suf = tag_tokens(exp.data.tags, s, t)
            write(w.prepared / test_set / f"{s}-{t}.src", [add_tags(x, pre, suf) for x in text(s)])
            refs = write(w.prepared / test_set / f"{s}-{t}.tgt", text(t))
            for m in methods:
                lines = refs.read_text(encoding="utf-8").split("\n")[:MAX_SENTENCES]
                write(w.results / "translate" / m / sub / f"{s}-{t}.hyp", lines if m == "good" else map(corrupt, lines))
    for lang in LANGS:
        write(w.prepared / "multiway" / f"ntrex.{lang}", ntrex(lang, 30))
    sizes = {"en-de": 1_000_000, "de-en": 1_000_000, "en-fr": 50_000, "fr-en": 50_000}
    report = {"train": {d: {"bitext": {"input": n, "kept": n}} for d, n in sizes.items()}}
    write(w.prepared / "report.json", [json.dumps(report)])
    train_spm(w.spm, [x for lang in LANGS for x in flores(lang, 200, "dev")])
    vocab_size = spm.SentencePieceProcessor(model_file=str(w.spm / "spm.model")).get_piece_size()
    write(w.bin / "meta.json", [json.dumps({"vocab_size": vocab_size, "pad": 1, "eos": 2, "bos": 0, "unk": 3,
                                            "languages": list(LANGS)})])
    for i, m in enumerate(methods):
        torch.manual_seed(i)
        model = build_transformer(exp.model, vocab_size=vocab_size, num_languages=len(LANGS), padding_idx=1)
        (w.results / "train" / m).mkdir(parents=True, exist_ok=True)
        torch.save({"model": model.state_dict()}, w.results / "train" / m / "model.pt")
    return w


def translate_view(exp: Any) -> Any:
    """The translate stage's view (lsnmt.decode.config.TranslateView) of a test's whole experiment."""
    from lsnmt.decode.config import TranslateView

    return TranslateView(data=exp.data, model=exp.model, decode=exp.decode, method_cfg=exp.method_cfg, train=exp.train)


def loaded(exp: Any, method: str, path: Any, vocab: Any, route: str | None = None, top_w: int | None = None) -> Any:
    """``lsnmt.decode.translate.load_model`` of method ``method`` of a test's whole experiment."""
    from lsnmt.decode.translate import load_model

    return load_model(method, path, vocab, exp=exp.name, model=exp.model, positions=exp.decode_positions,
                      method_cfg=exp.method_cfg, route=route, top_w=top_w)


def train_view(exp: Any) -> Any:
    """The train stage's view (lsnmt.train.config.TrainView) of a test's whole experiment."""
    from lsnmt.train.config import TrainView

    return TrainView(data=exp.data, model=exp.model, train=exp.train, method_cfg=exp.method_cfg)
