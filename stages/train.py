"""Stage ``train``: train one method on the encoded data (lsnmt.train.trainer).

    python -m stages.train --experiment default --method naive --log logs/default/train/naive.log

Resumable state lives in ``work/{exp}/ckpt/{method}`` (undeclared: the front ends delete declared
outputs before a run); the finished model and its curve go to ``results/{exp}/train/{method}``.
An LSL method with ``architecture: <search>`` (LSL-NAS) reads the layout the ``search`` stage selected
(``results/{exp}/search``, a declared input of every train job); one with ``dense_steps`` first trains its
dense model (LSL Sec. 3.3, ``lsnmt/train/pretrain.py``). Under ``torchrun`` every rank runs this same command (DDP).
"""

import functools
from pathlib import Path

from lsnmt import methods
from lsnmt.cli import run_method
from lsnmt.data import layout
from lsnmt.train.pretrain import dense_pretrained
from lsnmt.train.trainer import train
from models.build import build_transformer


def _train(exp, method: str) -> None:  # noqa: ANN001
    kind, cfg = methods.resolve(exp, method)
    cfg = methods.bind(exp, method, kind, cfg)
    bin_dir, work_dir = layout.bin_dir(exp.name), Path("work") / exp.name / "ckpt" / method
    factory = functools.partial(build_transformer, method=kind, method_cfg=cfg)
    if getattr(cfg, "dense_steps", 0):
        factory = dense_pretrained(exp, method, cfg, bin_dir, work_dir, factory)
    train(exp, bin_dir, Path("results") / exp.name / "train" / method, work_dir, model_factory=factory,
          criterion=methods.criterion(kind), method=methods.record(method, kind, cfg))


def main(argv: list[str] | None = None) -> None:
    run_method("train", _train, argv)


if __name__ == "__main__":
    main()
