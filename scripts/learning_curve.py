"""Learning curve of one method on an experiment's encoded data: BLEU / chrF on each test set against updates and
CPU time (how the default's scale was chosen; README "The default run").

    python scripts/learning_curve.py --experiment default --method naive --steps 250 500 1000 --out curve.tsv
    python scripts/learning_curve.py --experiment tiny --steps 2 3 --sentences 2 --out curve.tsv   # tiny (the test)

Seconds are CPU seconds of this process (``--threads 1`` by default: about the wall time on an idle core,
and not inflated by other load).
Trains with the experiment's settings (``train.max_steps`` replaced by each checkpoint of ``--steps``, resuming in
between), decodes the first ``--sentences`` sentences of every direction of every test set with the experiment's
decoding settings, and scores them with sacreBLEU against the prepared references. Model keys can be overridden
(``--model embed_dim=256 ffn_dim=1024``) to compare sizes. Reads the encode stage's data of the experiment
(``data/{exp}/{prepared,spm,bin}``, :mod:`lsnmt.paths`). Writes one TSV row per (steps, test set, side), the side
``en-xx`` (from the pivot), ``xx-en`` (into it) or ``xx-yy`` (between two other languages: zero-shot).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path
from typing import Any

import sacrebleu
import sentencepiece as spm
import torch
import yaml

from lsnmt import paths as P
from lsnmt.data.corpus import Vocab, load_split
from lsnmt.decode.translate import load_model, translate_direction
from lsnmt.experiment.params import Experiment, Params
from lsnmt.io import iter_lines
from lsnmt.train.method import train_method


def side(direction: str, pivot: str) -> str:
    """``en-xx``, ``xx-en`` or ``xx-yy`` (zero-shot) for ``direction`` (``src-tgt``) and the pivot ``en``."""
    src, tgt = direction.split("-")
    return f"{pivot}-xx" if src == pivot else f"xx-{pivot}" if tgt == pivot else "xx-yy"


def scores(exp: Experiment, method: str, model_pt: Path, sentences: int) -> list[tuple[str, str, float, float]]:
    """Mean BLEU and chrF over the directions of each (test set, side) of the first ``sentences`` sentences."""
    bin_dir = P.at(P.BIN, exp.name)
    vocab = Vocab.load(bin_dir)
    model = load_model(method, model_pt, vocab, exp=exp.name, model=exp.model, positions=exp.decode_positions,
                       method_cfg=exp.method_cfg)
    sp = spm.SentencePieceProcessor(model_file=str(P.at(P.SPM, exp.name) / "spm.model"))
    exp = dataclasses.replace(exp, decode=dataclasses.replace(exp.decode, max_sentences=sentences))
    out = []
    for name, pairs in exp.data.test_sets.items():
        by_side: dict[str, tuple[list[float], list[float]]] = {}
        for d in load_split(bin_dir, name, pairs, vocab):
            hyps = [sp.decode(h) for h in translate_direction(model, d, exp.decode, vocab, torch.device("cpu"),
                                                             exp.train.max_steps)]
            refs = list(iter_lines(P.at(P.PREPARED, exp.name) / name / f"{d.name}.tgt"))[: len(hyps)]
            by_side.setdefault(side(d.name, exp.data.pivot), ([], []))
            by_side[side(d.name, exp.data.pivot)][0].append(sacrebleu.corpus_bleu(hyps, [refs]).score)
            by_side[side(d.name, exp.data.pivot)][1].append(sacrebleu.corpus_chrf(hyps, [refs]).score)
        out += [(name, s, sum(b) / len(b), sum(c) / len(c)) for s, (b, c) in sorted(by_side.items())]
    return out


def overrides(pairs: list[str]) -> dict[str, Any]:
    """``["key=value", ...]`` as a dict, each value read as YAML."""
    return {k: yaml.safe_load(v) for k, v in (x.split("=", 1) for x in pairs)}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--experiment", default="default")
    ap.add_argument("--method", default="naive")
    ap.add_argument("--steps", type=int, nargs="+", required=True)
    ap.add_argument("--model", nargs="*", default=[], help="model overrides key=value")
    ap.add_argument("--train", nargs="*", default=[], help="train overrides key=value")
    ap.add_argument("--decode", nargs="*", default=[], help="decode overrides key=value (e.g. beam=1)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (CPU seconds are measured)")
    ap.add_argument("--sentences", type=int, default=200)
    ap.add_argument("--work", default="work/curve")
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    exp = Params.load(args.params).get(args.experiment)
    exp = dataclasses.replace(exp, model=dataclasses.replace(exp.model, **overrides(args.model)),
                              train=dataclasses.replace(exp.train, **overrides(args.train)),
                              decode=dataclasses.replace(exp.decode, **overrides(args.decode)))
    torch.set_num_threads(args.threads)
    work = Path(args.work)
    rows, clock = ["steps\tcpu_seconds\ttest_set\tside\tbleu\tchrf"], 0.0
    for steps in args.steps:
        run = dataclasses.replace(exp, train=dataclasses.replace(exp.train, max_steps=steps))
        start = time.process_time()
        train_method(run, exp.name, args.method, P.at(P.BIN, exp.name), work / "out", work / "ckpt")
        clock += time.process_time() - start
        for name, side, bleu, chrf in scores(run, args.method, work / "out" / "model.pt", args.sentences):
            rows.append(f"{steps}\t{clock:.0f}\t{name}\t{side}\t{bleu:.2f}\t{chrf:.2f}")
            print(rows[-1], flush=True)
    Path(args.out).write_text("\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
