"""Stage ``train``: train one method on the encoded data (lsnmt.train.trainer).

    python -m stages.train --experiment default --method naive --log logs/default/train/naive.log

Resumable state lives in ``work/{exp}/ckpt/{method}`` (undeclared: the front ends delete declared
outputs before a run); the finished model, its curve (``curve.tsv``, drawn as ``curve.png``:
lsnmt.train.curve_plot) and the record of what ran (``run.json``: lsnmt.record) go to
``results/{exp}/train/{method}``.
An LSL method with ``architecture: <search>`` (LSL-NAS) reads the layout the ``search`` stage selected
(``results/{exp}/search``, an input of every train job of an experiment that defines a search); one with
``dense_steps`` first trains its dense model (LSL Sec. 3.3, ``lsnmt/train/pretrain.py``).
With ``train.gpus_per_node`` > 1 or ``train.nodes`` > 1 the command re-executes itself under
``torchrun`` (lsnmt.runner.launch) and every rank runs this same command (DDP). SIGTERM or SIGUSR1 (preemption,
the end of a SLURM time limit) saves a checkpoint and exits with 128 + the signal number; the next run resumes.
"""

import sys

import torch

from lsnmt import paths as P
from lsnmt import record
from lsnmt.runner import launch
from lsnmt.runner.stage import run_method
from lsnmt.train import curve_plot
from lsnmt.train.method import train_method


def _train(exp, method: str, argv: list[str]) -> None:
    launch.relaunch(exp.train, argv, "stages.train", "train")
    torch.set_num_threads(exp.train.cpu_threads)  # same weights whatever the core count (TrainConfig.cpu_threads)
    name, out = exp.name, P.at(P.TRAIN, exp.name, method=method)
    train_method(exp, method, P.at(P.BIN, name), out,
                 P.at(P.CKPT, name, method=method))  # stop signals: lsnmt.runner.stage.guarded
    if record.write(out):  # the main rank: curve.tsv is its file
        curve_plot.draw(out / "curve.tsv", out / "curve.png", f"{name}: {method}")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run_method("train", lambda exp, method: _train(exp, method, args), args)


if __name__ == "__main__":
    main()
