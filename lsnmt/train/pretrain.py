"""Dense pre-training of an LSL model (Pires et al. 2023, Sec. 3.3), inside the method's own train job.

The paper initialises "all encoder weights (both shared and LSLs) from a pre-trained architecture consisting
only of regular Transformer layers": the baseline of the same decoder type. Here the dense model of the LSL
model's shape is trained first, for ``dense_steps`` updates, in ``work/{exp}/ckpt/{method}.dense`` (resumable
like any run), and its weights are copied into every language's copy of each LSL
(``models.ls.lsl.dense_init``) before the LSL model trains for ``train.max_steps`` updates with a fresh
optimizer. Training the dense phase in the same job, rather than reading ``train@naive``'s output, keeps
every train job's declared inputs the same in both front ends; at paper scale it repeats the baseline's
training (set ``dense_steps`` to the baseline's 150K updates to match the paper).
"""

from __future__ import annotations

import dataclasses
import logging
from pathlib import Path
from typing import Any

from torch import nn

from lsnmt.train import checkpoint as ckpt
from lsnmt.train.trainer import ModelFactory, Training, train
from models.build import build_transformer
from models.config import kinds

log = logging.getLogger(__name__)


def dense_dir(work_dir: Path) -> Path:
    """Work directory of the dense phase of the method whose work directory is ``work_dir``."""
    return work_dir.with_name(work_dir.name + ".dense")


def dense_pretrained(spec: Training, name: str, kind: str | None, cfg: Any, bin_dir: Path, work_dir: Path,
                     factory: ModelFactory) -> ModelFactory:
    """Train (or finish) the dense phase of method ``name`` (of ``kind``: its ``model`` gives the dense model's
    shape, its ``dense_steps`` the updates, its ``dense_init`` the copy); return ``factory`` followed by the copy
    of the dense weights."""
    k = kinds.KINDS[kind] if kind is not None else None
    if k is None or k.dense_steps is None or k.dense_init is None:
        raise ValueError(f"method {name!r}: a {kind or 'naive'} model has no dense pre-training")
    steps = k.dense_steps(cfg)
    shape = k.model(cfg, spec.model) if k.model is not None else spec.model
    dense_init = kinds.load(k.dense_init)
    dense_exp = dataclasses.replace(spec, model=shape, train=dataclasses.replace(spec.train, max_steps=steps))
    root = dense_dir(work_dir)
    log.info("%s: dense pre-training, %d updates of the dense %s model (LSL Sec. 3.3)", name, steps,
             "per-target-decoder" if dense_exp.model.decoder == "per-target" else "shared-decoder")
    train(dense_exp, bin_dir, root / "out", root / "ckpt", model_factory=build_transformer,
          method={"name": name, "dense_pretraining": True})
    dense = ckpt.load(root / "out" / "model.pt")["model"]

    def initialised(*args: Any, **kwargs: Any) -> nn.Module:
        net = factory(*args, **kwargs)
        n = dense_init(net, dense)
        log.info("%s: %d tensors initialised from the dense model", name, n)
        return net

    return initialised
