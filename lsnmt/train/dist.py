"""Process group set-up for ``torchrun``: NCCL on CUDA, gloo on CPU.

``torchrun --nproc-per-node G -m stages.train …`` sets ``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR`` and ``MASTER_PORT``; without them the run is a
single process and nothing is initialised.

Control messages (the stop-signal agreement, once per update) go through a gloo group on the CPU: on CUDA the
default group is NCCL, whose tensors live on the GPU, and reading one would wait for every queued kernel.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist
from torch import Tensor


def pick_device(local_rank: int = 0, threads: int | None = None) -> torch.device:
    """The project's one device choice: ``cuda:local_rank`` when CUDA is available, else the CPU (with ``threads``
    intra-op threads, when given)."""
    if torch.cuda.is_available():
        return torch.device("cuda", local_rank)
    if threads is not None:
        torch.set_num_threads(threads)
    return torch.device("cpu")


@dataclass(frozen=True)
class Dist:
    rank: int
    world_size: int
    device: torch.device
    owns_group: bool
    """True when :meth:`from_env` initialised the process group (and :meth:`close` destroys it)."""
    control: Any = field(default=None, compare=False)
    """The gloo group of control messages (``None``: the default group, already gloo; or one process)."""

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @classmethod
    def from_env(cls, threads: int | None = None) -> Dist:
        """Read the torchrun environment; initialise the default process group if there are several ranks.
        ``threads``: torch's intra-op threads when the ranks run on the CPU (``None``: torch's default)."""
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", "0"))
        device = pick_device(local, threads)
        cuda = device.type == "cuda"
        if cuda:
            torch.cuda.set_device(device)
        owns = False
        if world > 1 and not dist.is_initialized():
            dist.init_process_group("nccl" if cuda else "gloo", rank=rank, world_size=world,
                                    device_id=device if cuda else None)
            owns = True
        control = dist.new_group(backend="gloo") if world > 1 and cuda else None
        return cls(rank, world, device, owns, control)

    def all_reduce(self, t: Tensor) -> Tensor:
        """Sum ``t`` over ranks, in place (no-op for one process)."""
        if self.world_size > 1:
            dist.all_reduce(t)
        return t

    def agree(self, caught: list[int]) -> int:
        """The signal every rank stops on: the largest caught by any rank (0: none); a CPU all-reduce, no GPU
        sync."""
        if self.world_size == 1:
            return caught[0] if caught else 0
        flag = torch.tensor([caught[0] if caught else 0], dtype=torch.int64)
        dist.all_reduce(flag, op=dist.ReduceOp.MAX, group=self.control)
        return int(flag.item())

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier()

    def close(self) -> None:
        if self.owns_group and dist.is_initialized():
            dist.destroy_process_group()
