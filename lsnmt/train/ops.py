"""Operations per training update of an experiment's model (:func:`update_ops`): what a GPU's host pays per update.

One update as the trainer runs it (:func:`lsnmt.train.update.update` with the method's criterion and auxiliary
loss, fused AdamW) on one batch shaped like the experiment's training batches (:func:`mixed_batch`), counted by
:func:`models.opcount.count_ops` after one warm-up update (the optimizer's state is created on its first step).
Used by the operation-count test (``tests/models/test_op_counts.py``) and ``benchmarks/host_cost.py``.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np
import torch

from lsnmt.data.corpus import Sample
from lsnmt.methods import resolve
from lsnmt.train.dist import Dist
from lsnmt.train.loss import default_criterion
from lsnmt.train.optim import build_optimizer
from lsnmt.train.trainer import Training
from lsnmt.train.update import update, updater
from models.build import build_transformer
from models.lang import LangContext
from models.ls import criterion as kind_criterion
from models.opcount import OpLog, count_ops

PAD, EOS = 1, 2


class MethodSpec(Training, Protocol):
    """What an update's count reads: a :class:`~lsnmt.train.trainer.Training` (``data``, ``model``, ``train``) and the
    methods' entries (``method_cfg``): the train stage's view and an experiment both are one."""

    @property
    def method_cfg(self) -> Mapping[str, Any]: ...


def mixed_batch(
    exp: MethodSpec, vocab_size: int, *, max_tokens: int | None = None, length: int = 24, seed: int = 0
) -> Sample:
    """A mixed-direction batch of ``max_tokens`` (default ``train.max_tokens``) as the length-sorted batcher forms
    them: ``max_tokens // length`` rows of lengths ``length - 4 … length``, the directions of the experiment's
    training pairs in turn (every language present)."""
    rng = np.random.default_rng(seed)
    tokens = max_tokens or exp.train.max_tokens
    rows = max(1, tokens // length)
    pairs = exp.data.train_pairs
    langs = list(exp.data.languages)
    ids = np.array([(langs.index(src), langs.index(tgt)) for src, tgt in pairs], np.int64)
    which = ids[np.arange(rows) % len(ids)]
    src_len = rng.integers(length - 4, length + 1, rows)
    tgt_len = rng.integers(length - 4, length + 1, rows)

    def padded(lengths: np.ndarray, first: int | None, last: int | None) -> torch.Tensor:
        out = np.full((rows, int(lengths.max())), PAD, np.int64)
        for i, n in enumerate(lengths):
            body = rng.integers(4, vocab_size, n - 1)
            out[i, :n] = np.concatenate([[first], body] if first is not None else [body, [last]])
        return torch.from_numpy(out)

    target = padded(tgt_len, None, EOS)
    return Sample(
        src_tokens=padded(src_len, None, EOS),
        prev_output_tokens=padded(tgt_len, EOS, None),
        target=target,
        langs=LangContext.from_ids(which[:, 0], which[:, 1]),
        ntokens=int(tgt_len.sum()),
    )


def update_ops(
    exp: MethodSpec, method: str, *, vocab_size: int = 8000, sample: Sample | None = None, compile: bool = False
) -> OpLog:
    """ATen operations of one eager training update of ``method``'s model in ``exp`` (module docstring)."""
    return step_ops(one_update(exp, method, vocab_size=vocab_size, sample=sample, compile=compile))


def step_ops(step: Callable[[], None]) -> OpLog:
    """The operations of one ``step()`` (an update) after a first, uncounted one: the optimizer's state is made on
    its first step."""
    step()
    with count_ops() as ops:
        step()
    return ops


def one_update(
    exp: MethodSpec, method: str, *, vocab_size: int = 8000, sample: Sample | None = None, compile: bool = False
) -> Callable[[], None]:
    """``step()``: one training update of a fresh model of ``method`` in ``exp`` on ``sample`` (default
    :func:`mixed_batch`), as the trainer runs it on a CPU in fp32 (module docstring)."""
    kind, cfg = resolve(exp.method_cfg, method)
    torch.manual_seed(0)
    model = build_transformer(
        exp.model,
        vocab_size=vocab_size,
        num_languages=len(exp.data.languages),
        padding_idx=PAD,
        method=kind,
        method_cfg=cfg,
    )
    up = updater(
        model,
        build_optimizer(model.parameters(), exp.train, fused=True),
        Dist(0, 1, torch.device("cpu"), False),
        precision="fp32",
        clip_norm=exp.train.clip_norm,
    )
    if compile:
        up.net = torch.compile(model)  # type: ignore[assignment]
    crit = kind_criterion(kind) or default_criterion
    batch = sample or mixed_batch(exp, vocab_size)
    micro = functools.partial(_micro, up, crit, batch, exp.train.label_smoothing)
    steps = itertools.count()

    def step() -> None:
        update(up, [micro], 1e-4, next(steps))

    return step


def _micro(up: object, crit: object, sample: Sample, epsilon: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The trainer's micro-batch (``lsnmt.train.step._micro``): the criterion's loss plus the auxiliary loss."""
    langs = sample.langs.with_(progress=0.5)
    on = Sample(sample.src_tokens, sample.prev_output_tokens, sample.target, langs, sample.ntokens)
    loss, nll, _ = crit(up.net, on, epsilon, PAD)  # type: ignore[attr-defined,operator]
    total = loss
    aux = up.model.aux_loss() if hasattr(up.model, "aux_loss") else None  # type: ignore[attr-defined]
    if aux is not None:
        total = total + aux.float() * sample.ntokens
    return total / sample.ntokens, torch.stack([loss.detach(), nll.detach()])
