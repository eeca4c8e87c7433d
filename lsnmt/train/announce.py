"""The training job's start line: what trains on what, where (one line on the console, :mod:`lsnmt.runner.console`).

fairseq logs the model, its parameter count, the data and the device before the first update; so does this, in
one line, e.g. ``train: 1,234,567 parameters (1,100,000 trained), 8 directions, 24,000 pairs, 200 updates of
2,048 tokens x 1, device cpu, 2 threads, 1 rank``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Protocol

import torch
from torch import nn

from lsnmt.runner.console import CONSOLE
from lsnmt.runner.progress import in_a_loop


class _Sized(Protocol):
    def __len__(self) -> int: ...


def start_line(
    name: str,
    model: nn.Module,
    dirs: Sequence[_Sized],
    *,
    max_steps: int,
    max_tokens: int,
    update_freq: int,
    device: torch.device,
    world_size: int = 1,
    step: int = 0,
) -> str:
    """The line (see the module docstring); ``step > 0``: resumed there."""
    total = sum(p.numel() for p in model.parameters())
    trained = sum(p.numel() for p in model.parameters() if p.requires_grad)
    resumed = f", resuming at update {step:,}" if step else ""
    return (
        f"{name}: {total:,} parameters ({trained:,} trained), {len(dirs)} directions, "
        f"{sum(len(d) for d in dirs):,} pairs, {max_steps:,} updates of {max_tokens:,} tokens x {update_freq}"
        f"{resumed}, device {device}, {torch.get_num_threads()} threads, {world_size} rank(s)"
    )


def announce(log: logging.Logger, line: str) -> None:
    """Log ``line`` in the log file, and on the console unless this training is one item of a loop that reports
    its own progress (the claim stage's jobs)."""
    log.info("%s", line, extra=None if in_a_loop() else CONSOLE)
