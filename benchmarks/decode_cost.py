# ruff: noqa: E402  (imports follow the sys.path set-up)
"""Decoding speed at batch size 1 on CPU of a trained model (LSL App. H, Table 13), plus its parameter counts.

    .venv/bin/python benchmarks/decode_cost.py --method naive [--experiment default] [--pair de-en]
        [--sentences 100] [--runs 5] [--threads 1] [--model results/default/train/naive/model.pt]
    .venv/bin/python benchmarks/decode_cost.py --method naive --sentences 2 --runs 2   # tiny (the test)

LSL reports target tokens per second on the Flores-101 DE-EN test set, one
sentence at a time, on a single CPU thread, as the mean and standard deviation
of 5 runs. This script translates the first ``--sentences`` encoded test
sources of ``--pair`` (``data/{exp}/bin/test``: ``lsnmt.paths.BIN``) with the experiment's beam
settings (``decode`` in params.yaml) and reports the same, with the
training / inference parameter counts (models.param_count). Numbers depend on
the machine: compare methods in one run on one machine.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from lsnmt import paths as P
from lsnmt.data.corpus import Vocab, load_split
from lsnmt.decode.translate import load_model
from lsnmt.eval.cost import decoding_speed, parameter_counts
from lsnmt.experiment.params import Params


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--params", default="params.yaml")
    parser.add_argument("--experiment", default=None)
    parser.add_argument("--method", required=True)
    parser.add_argument("--model", default=None, help="default: the train stage's (lsnmt.paths.MODEL)")
    parser.add_argument("--pair", default=None, help="direction src-tgt (default: de-en if evaluated, else the first)")
    parser.add_argument("--sentences", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    exp = Params.load(args.params).get(args.experiment)
    pairs = [f"{s}-{t}" for s, t in exp.data.eval_pairs]
    pair = args.pair or ("de-en" if "de-en" in pairs else pairs[0])
    bin_dir = P.at(P.BIN, exp.name)
    vocab = Vocab.load(bin_dir)
    model_path = Path(args.model or P.at(P.MODEL, exp.name, method=args.method))
    model = load_model(args.method, model_path, vocab, exp=exp.name, model=exp.model, positions=exp.decode_positions,
                       method_cfg=exp.method_cfg)
    src, tgt = pair.split("-")
    (direction,) = load_split(bin_dir, "test", ((src, tgt),), vocab)
    n = min(args.sentences, len(direction))
    sources = [torch.from_numpy(np.append(direction.src[i], vocab.eos).astype(np.int64)) for i in range(n)]
    d = exp.decode
    speed = decoding_speed(model, sources, direction.src_lang, direction.tgt_lang, beam=d.beam, lenpen=d.lenpen,
                           max_len_a=d.max_len_a, max_len_b=d.max_len_b, eos=vocab.eos, pad=vocab.pad,
                           runs=args.runs, threads=args.threads)
    counts = parameter_counts(model, [(direction.src_lang, direction.tgt_lang)])
    print(json.dumps({"experiment": exp.name, "method": args.method, "pair": pair, **speed, **counts}, indent=2))
    print(f"{args.method} {pair}: {speed['tokens_per_second']:.1f} ± {speed['std']:.1f} tokens/s "
          f"(batch 1, beam {d.beam}, {args.threads} thread(s), {args.runs} runs of {n} sentences)")


if __name__ == "__main__":
    main()
