"""Train one claim job with the real trainer, decode its systems, count its parameters (``lsnmt.claim``).

Training is ``stages/train.py``'s: :func:`lsnmt.train.method.train_method` (the kind's batches, its factory and
criterion, dense pre-training where the kind has it). Decoding is ``translate``'s loader (through each route of FD and
LMS+FD: ``lsnmt.methods.systems``) and batched beam search on the test split; hypotheses and references are
token ids written as words (``"17 23 9"``), the strings BLEU and exact match compare.
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch

from lsnmt import methods
from lsnmt.accounting import shared_params, train_params
from lsnmt.config import Experiment
from lsnmt.decode.translate import load_model, translate_direction
from lsnmt.train.corpus import Vocab, load_split
from lsnmt.train.method import train_method
from models.build import build_transformer

log = logging.getLogger(__name__)

Hyps = dict[str, list[str]]
"""Direction ``src-tgt`` -> one line per test sentence."""


def words(ids: list[int]) -> str:
    return " ".join(map(str, ids))


def train_job(exp: Experiment, method: str, bin_dir: Path, work: Path) -> Path:
    """Train ``method`` of ``exp`` into ``work`` (checkpoints in ``work/ckpt``) as the train stage does; return its
    ``model.pt``."""
    train_method(exp, method, bin_dir, work / "model", work / "ckpt")
    return work / "model" / "model.pt"


def references(exp: Experiment, bin_dir: Path) -> Hyps:
    vocab = Vocab.load(bin_dir)
    return {d.name: [words(d.tgt[i].tolist()) for i in range(len(d))]
            for d in load_split(bin_dir, "test", exp.data.train_pairs, vocab)}


def decode(exp: Experiment, method: str, model_path: Path, bin_dir: Path) -> dict[str, Hyps]:
    """Hypotheses of every system of ``method`` (``lsnmt.methods.systems``) on every tested direction."""
    vocab = Vocab.load(bin_dir)
    tests = load_split(bin_dir, "test", exp.data.train_pairs, vocab)
    out = {}
    for system in methods.systems(exp, method):
        model = load_model(exp, method, model_path, vocab, route=system.route, top_w=system.top_w)
        with torch.inference_mode():
            out[system.name] = {d.name: [words(h) for h in translate_direction(model, d, exp, vocab,
                                                                                torch.device("cpu"))] for d in tests}
    return out


def param_counts(exp: Experiment, method: str, vocab: Vocab) -> dict[str, dict[str, int]]:
    """``{system: {"total", "shared"}}``: all trained parameters, and those every tested direction uses through
    the system's route (``lsnmt.accounting.shared_params``)."""
    kind = methods.resolve(exp, method)[0]
    pairs = [(vocab.lang_id(s), vocab.lang_id(t)) for s, t in exp.data.train_pairs]
    out = {}
    for system in methods.systems(exp, method):
        model = build_transformer(exp.model, vocab_size=vocab.size, num_languages=len(vocab.languages),
                                  padding_idx=vocab.pad, method=kind,
                                  method_cfg=methods.resolve_system(exp, system)[1])
        out[system.name] = {"total": train_params(model), "shared": shared_params(model, pairs)}
    return out
