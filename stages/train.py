"""Stage ``train``: train one method on the encoded data (lsnmt.train.trainer).

    python -m stages.train --experiment default --method naive --log logs/default/train/naive.log

Reads :class:`lsnmt.train.config.TrainView` only: ``data``, ``model``, ``train`` and the method's own entry
(``method_cfg.<method>``).
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
from lsnmt.runner.base import Each, Job, run_stage
from lsnmt.train import curve_plot
from lsnmt.train.config import TrainView
from lsnmt.train.method import train_method
from lsnmt.view import job_list

VIEW = TrainView
EACH = Each("method", "methods", lambda path, exp, _view: job_list(path, exp, "methods"))


def _train(view: TrainView, job: Job, argv: list[str]) -> None:
    launch.relaunch(view.train, argv, "stages.train", "train")
    torch.set_num_threads(view.train.cpu_threads)  # same weights whatever the core count (TrainConfig.cpu_threads)
    exp, method = job.experiment, str(job.item)
    out = P.at(P.TRAIN, exp, method=method)
    train_method(view, exp, method, P.at(P.BIN, exp), out,
                 P.at(P.CKPT, exp, method=method))  # stop signals: lsnmt.runner.base.guarded
    if record.write(out):  # the main rank: curve.tsv is its file
        curve_plot.draw(out / "curve.tsv", out / "curve.png", f"{exp}: {method}")


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    run_stage("train", VIEW, lambda view, job: _train(view, job, args), args, each=EACH)


if __name__ == "__main__":
    main()
