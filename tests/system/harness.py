"""Train a method on the synthetic task (``lsnmt.data.synthetic``) and score its translations.

The real code paths: shards as the encode stage writes them, ``lsnmt.train.trainer.train`` with the method's
factory and criterion (as ``stages/train.py``), the LSL search (``lsnmt.train.arch_search``) for LSL-NAS, and
``lsnmt.decode.translate``'s loader and batched beam search on the held-out ``test`` split.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sacrebleu
import torch

from lsnmt import methods
from lsnmt.data.corpus import Vocab, load_split
from lsnmt.data.synthetic import Task, write_shards
from lsnmt.decode.translate import load_model, translate_direction
from lsnmt.experiment.params import Experiment
from lsnmt.methods.schema import typed_entry
from lsnmt.train.arch_search import run_search
from lsnmt.train.method import train_method as train_the_method
from models.build import build_transformer
from models.config import kinds
from tests.data.helpers import experiment

LANGS = ("en", "de", "fr", "ru")
ZERO_SHOT = ("de-fr",)


def write_bin(task: Task, root: Path, sizes: dict[str, int], seed: int = 1) -> Path:
    """Shards of the task in ``root``: en-centric train / valid, test with the zero-shot directions too."""
    return write_shards(task, root, sizes, seed, extra_test=tuple(tuple(z.split("-")) for z in ZERO_SHOT))


def task_experiment(method_cfg: dict[str, Any], model: dict[str, Any], train_cfg: dict[str, Any],
                    search: dict[str, Any] | None = None) -> Experiment:
    """An en-centric experiment over :data:`LANGS` (zero-shot :data:`ZERO_SHOT`) with these settings."""
    return experiment(LANGS, data={"zero_shot": list(ZERO_SHOT)}, model=model, train=train_cfg,
                      decode={"beam": 2, "max_len_a": 1.0, "max_len_b": 4, "max_sentences": None},
                      method_cfg=method_cfg, search=search or {})


@dataclass(frozen=True)
class Scores:
    exact: dict[str, float]
    """Exact-match rate per direction (%)."""
    bleu: dict[str, float]
    """Corpus BLEU per direction on token ids written as words (sacreBLEU, tokenize none)."""

    def mean(self, table: dict[str, float], zero_shot: bool = False) -> float:
        keys = [d for d in table if (d in ZERO_SHOT) == zero_shot]
        return sum(table[d] for d in keys) / len(keys)


def train_method(exp: Experiment, name: str, bin_dir: Path, root: Path) -> Path:
    """Train method ``name`` of ``exp`` as ``stages/train.py`` does; returns its ``model.pt``."""
    if kinds.searched(*methods.resolve(exp.method_cfg, name)) is not None:  # LSL-NAS: the search first
        run_search(exp, exp.search, exp.name, bin_dir, root / "results" / exp.name / "search", root / "work" / "search")
    out = root / "results" / exp.name / "train" / name
    train_the_method(exp, exp.name, name, bin_dir, out, root / "work" / name, results=root / "results")
    return out / "model.pt"


def score(exp: Experiment, name: str, model_path: Path, bin_dir: Path, **overrides: Any) -> Scores:
    """Decode the test split with ``translate``'s loader and beam search; ``overrides`` replace fields of the
    method's config (e.g. ``route="ls"``: the same weights through the other route)."""
    if overrides:
        entry = {**exp.method_cfg[name].entry, **overrides}
        exp = dataclasses.replace(exp, method_cfg={**exp.method_cfg, name: typed_entry(entry, f"method_cfg.{name}")})
    vocab = Vocab.load(bin_dir)
    model = load_model(name, model_path, vocab, exp=exp.name, model=exp.model, positions=exp.decode_positions,
                       method_cfg=exp.method_cfg)
    exact, bleu = {}, {}
    for direction in load_split(bin_dir, "test", exp.data.eval_pairs, vocab):
        hyps = translate_direction(model, direction, exp.decode, vocab, torch.device("cpu"), exp.train.max_steps)
        refs = [direction.tgt[i].tolist() for i in range(len(direction))]
        exact[direction.name] = 100.0 * sum(h == r for h, r in zip(hyps, refs, strict=True)) / len(refs)
        words = [" ".join(map(str, h)) for h in hyps]
        bleu[direction.name] = sacrebleu.corpus_bleu(words, [[" ".join(map(str, r)) for r in refs]],
                                                     tokenize="none").score
    return Scores(exact, bleu)


def changed_tensors(model_path: Path, exp: Experiment, name: str, vocab: Vocab) -> tuple[list[str], list[str]]:
    """(changed, unchanged) parameter names of the trained model against its initialisation (same seed)."""
    kind, cfg = methods.resolve(exp.method_cfg, name)
    state = torch.load(model_path, map_location="cpu", weights_only=True)
    cfg = methods.bind(exp.name, exp.model, name, kind, cfg, stored=state["config"].get("method"))
    torch.manual_seed(exp.train.seed)
    init = build_transformer(exp.model, vocab_size=vocab.size, num_languages=len(vocab.languages),
                             padding_idx=vocab.pad, method=kind, method_cfg=cfg)
    params = dict(init.named_parameters())
    changed, same = [], []
    for key, value in state["model"].items():
        if key in params:
            (same if torch.equal(value, params[key].detach()) else changed).append(key)
    return changed, same
