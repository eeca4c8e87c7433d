"""Learning curve of one method on an experiment's encoded data: BLEU / chrF on each test set against updates and
CPU time (how the default's scale was chosen; README "The default run").

    python scripts/learning_curve.py --experiment default --method naive --steps 250 500 1000 --out curve.tsv

Seconds are CPU seconds of this process (``--threads 1`` by default: about the wall time on an idle core,
and not inflated by other load).
Trains with the experiment's settings (``train.max_steps`` replaced by each checkpoint of ``--steps``, resuming in
between), decodes the first ``--sentences`` sentences of every direction of every test set with the experiment's
decoding settings, and scores them with sacreBLEU against the prepared references. Model keys can be overridden
(``--model embed_dim=256 ffn_dim=1024``) to compare sizes. Writes one TSV row per (steps, test set, side).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

import sacrebleu
import sentencepiece as spm
import torch
import yaml

from lsnmt.config import Params
from lsnmt.data import layout
from lsnmt.data.corpus import Vocab, load_split
from lsnmt.decode.translate import load_model, translate_direction
from lsnmt.io import iter_lines
from lsnmt.train.method import train_method


def scores(exp, method: str, model_pt: Path, sentences: int) -> list[tuple[str, str, float, float]]:
    vocab, bin_dir = Vocab.load(layout.bin_dir(exp.name)), layout.bin_dir(exp.name)
    model = load_model(exp, method, model_pt, vocab)
    sp = spm.SentencePieceProcessor(model_file=str(layout.spm_dir(exp.name) / "spm.model"))
    exp = dataclasses.replace(exp, decode=dataclasses.replace(exp.decode, max_sentences=sentences))
    out = []
    for name, pairs in exp.data.test_sets.items():
        by_side: dict[str, tuple[list[str], list[str]]] = {}
        for d in load_split(bin_dir, name, pairs, vocab):
            hyps = [sp.decode(h) for h in translate_direction(model, d, exp, vocab, torch.device("cpu"))]
            refs = list(iter_lines(layout.prepared_dir(exp.name) / name / f"{d.name}.tgt"))[:len(hyps)]
            side = "en-xx" if d.name.startswith(exp.data.pivot + "-") else "xx-en"
            by_side.setdefault(side, ([], []))
            by_side[side][0].append(sacrebleu.corpus_bleu(hyps, [refs]).score)
            by_side[side][1].append(sacrebleu.corpus_chrf(hyps, [refs]).score)
        out += [(name, side, sum(b) / len(b), sum(c) / len(c)) for side, (b, c) in sorted(by_side.items())]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
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
    args = ap.parse_args()
    exp = Params.load("params.yaml").get(args.experiment)
    over = lambda kv: {k: yaml.safe_load(v) for k, v in (x.split("=", 1) for x in kv)}  # noqa: E731
    exp = dataclasses.replace(exp, model=dataclasses.replace(exp.model, **over(args.model)),
                              train=dataclasses.replace(exp.train, **over(args.train)),
                              decode=dataclasses.replace(exp.decode, **over(args.decode)))
    torch.set_num_threads(args.threads)
    work = Path(args.work)
    rows, clock = ["steps\tcpu_seconds\ttest_set\tside\tbleu\tchrf"], 0.0
    for steps in args.steps:
        run = dataclasses.replace(exp, train=dataclasses.replace(exp.train, max_steps=steps))
        start = time.process_time()
        train_method(run, args.method, layout.bin_dir(exp.name), work / "out", work / "ckpt")
        clock += time.process_time() - start
        for name, side, bleu, chrf in scores(run, args.method, work / "out" / "model.pt", args.sentences):
            rows.append(f"{steps}\t{clock:.0f}\t{name}\t{side}\t{bleu:.2f}\t{chrf:.2f}")
            print(rows[-1], flush=True)
    Path(args.out).write_text("\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
