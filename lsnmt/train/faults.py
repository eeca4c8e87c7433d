"""Device faults of a training run and what the user gets for each (:func:`lsnmt.train.loop.run_updates`):

* **Out of memory in an update** (``torch.OutOfMemoryError``: a long batch on a GPU). The run stops with one
  line, :class:`OutOfMemory`, naming the update, the batch (its size on this rank) and the setting that sizes it;
  nothing is saved, so the last checkpoint is kept as it was and a rerun resumes from it. (fairseq's trainer
  skips such a batch and goes on; here the data of every update stays what the seed fixes, so a run and its
  resumed copies stay equal.)
* **A non-finite loss in fp16.** The gradient scaler finds the overflow and skips the step; the update is not
  counted and its batches are consumed (fairseq: "gradient overflow detected, ignoring gradient"). The loop
  counts the skipped updates and logs how many since its last line (:func:`skipped_line`). It stops (one
  ``FloatingPointError`` line) once the loss scale falls below :data:`MIN_LOSS_SCALE`, fairseq's
  ``--min-loss-scale``: the loss is then non-finite update after update, not an occasional overflow.
* **A non-finite loss in bf16 / fp32** has no scaler to absorb it: the NaN guard stops the run at its next check
  (at most ``log_every`` updates later), one ``FloatingPointError`` line naming the first bad update, no
  checkpoint of it or of any later update written (:mod:`lsnmt.train.loop`).
"""

from __future__ import annotations

from collections.abc import Sequence

from torch import Tensor

from lsnmt.stops import OutOfMemory

__all__ = ["MIN_LOSS_SCALE", "OutOfMemory", "describe_batch", "loss_scale_error", "out_of_memory", "skipped_line"]

MIN_LOSS_SCALE = 1e-4
"""fairseq's default ``--min-loss-scale``: below it, fp16 training stops ("Minimum loss scale reached")."""


def out_of_memory(update: int, batch: str, saved: int | None, exc: BaseException) -> OutOfMemory:
    """The :class:`OutOfMemory` of update ``update``: ``batch`` describes its batch and the setting that sizes it;
    ``saved``: the update the last checkpoint holds (``None``: none written)."""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    where = ". ".join(first.split(". ")[:2])[:120]  # "CUDA out of memory. Tried to allocate 2.00 GiB"
    kept = f"the checkpoint of update {saved} is kept" if saved else "no checkpoint was written yet"
    return OutOfMemory(f"update {update}: {where}, on {batch}; {kept}, a rerun resumes from it")


def describe_batch(sizes: Sequence[tuple[Tensor, Tensor]], ntokens: int, setting: str, value: int) -> str:
    """``a batch of 9,123 target tokens (512 sentences in 2 micro-batch(es), the largest 300 sentences x 41 source +
    43 target positions); lower train.max_tokens (now 8192)``: ``sizes`` holds each micro-batch's source and target
    token matrices on this rank, ``ntokens`` their target tokens."""
    sentences = sum(int(src.shape[0]) for src, _ in sizes)
    big_src, big_tgt = max(sizes, key=lambda st: st[0].numel() + st[1].numel()) if sizes else (None, None)
    largest = (
        f", the largest {big_src.shape[0]} sentences x {big_src.shape[1]} source + {big_tgt.shape[1]} target positions"
        if big_src is not None and big_tgt is not None
        else ""
    )
    return (
        f"a batch of {ntokens:,} target tokens ({sentences:,} sentences in {len(sizes)} micro-batch(es){largest})"
        f"; lower {setting} (now {value})"
    )


def skipped_line(count: int, since: int) -> str:
    """The log line of ``count`` fp16 updates skipped since update ``since``."""
    return (
        f"skipped {count} update(s) since step {since}: fp16 loss or gradients not finite (not counted, as "
        f"fairseq; the loss scale is lowered each time)"
    )


def loss_scale_error(update: int, scale: float) -> FloatingPointError:
    """The stop of fp16 training whose loss scale fell below :data:`MIN_LOSS_SCALE` at update ``update``."""
    return FloatingPointError(
        f"step {update}: the fp16 loss scale fell to {scale:g}, below {MIN_LOSS_SCALE:g}: the loss or its gradients "
        f"are not finite update after update; stopped, no checkpoint written for it or any later update (lower "
        f"the learning rate, clip the gradients, or train in bf16)"
    )
