"""Training on several GPUs: the ``torchrun`` / ``srun`` command, and the SLURM request of the ``train`` rule.

``train.gpus_per_node`` (G) and ``train.nodes`` (N) in params.yaml fix the DDP world, ``W = max(1, G) * N``
ranks. ``max_tokens`` is per rank, as fairseq's ``--max-tokens`` is per GPU, so the global batch is
``max_tokens * update_freq * W`` (the LMS-FD and CLM papers: 4096 tokens on each of 4 GPUs).

- ``W = 1``: the stage trains in its own process.
- ``N = 1, G > 1``: the stage replaces itself by
  ``python -m torch.distributed.run --standalone --nproc-per-node G -m stages.train -- <its own arguments>``;
  every rank runs the same command and finds its place in ``RANK``/``WORLD_SIZE`` (:mod:`lsnmt.train.dist`).
- ``N > 1`` (inside a SLURM allocation only): ``srun`` starts one ``torchrun`` per node, which meet at a c10d
  rendezvous on this host.

The same two numbers give the SLURM request of the ``train`` rule (:func:`job_resources`, read by the
Snakefile): ``gpu = G * N`` and ``nodes = N``. Several nodes also set the plugin's ``mpi`` resource, so that
the plugin runs the rule's command in the batch script rather than in a one-task ``srun`` step, and this
module's ``srun`` places the per-node launchers. What is site-specific (partition, GPU model, CPUs and memory
per GPU, run time) stays in the profile, ``slurm/config.yaml``.
"""

from __future__ import annotations

import os
import socket
import sys
from collections.abc import Mapping, Sequence

from lsnmt.config import TrainConfig

SHUTDOWN_TIMEOUT = 240
"""Seconds ``torchrun`` gives its ranks to exit after it forwards SIGTERM before it kills them (its default, 30,
can cut a large checkpoint's save short); the profile's ``--signal=TERM@300`` leaves 300 before the limit."""


class LaunchError(RuntimeError):
    """The requested world cannot be started here; the message names the params.yaml key."""


def job_resources(train: TrainConfig) -> dict[str, int | str]:
    """Snakemake resources of one training job (portable: counts only, no partition or GPU model)."""
    res: dict[str, int | str] = {"gpu": train.gpus_per_node * train.nodes, "nodes": train.nodes}
    if train.nodes > 1:
        # The plugin's MPI mode: `--ntasks N` (one launcher per node) and no implicit `--ntasks-per-gpu`.
        res.update(mpi="srun", tasks=train.nodes, tasks_per_gpu=0)
    return res


def rendezvous_port(env: Mapping[str, str]) -> int:
    """A port in 20000..39999 fixed by the SLURM job id, so that two jobs on one head node do not collide."""
    return 20000 + int(env.get("SLURM_JOB_ID", "0")) % 20000


def torchrun_flags() -> list[str]:
    """``--shutdown-timeout`` where this torch's ``torchrun`` has it (recent versions), else nothing."""
    from torch.distributed.run import get_args_parser

    options = {o for action in get_args_parser()._actions for o in action.option_strings}
    return [f"--shutdown-timeout={SHUTDOWN_TIMEOUT}"] if "--shutdown-timeout" in options else []


def command(train: TrainConfig, argv: Sequence[str], env: Mapping[str, str] = os.environ,
            python: str = sys.executable, host: str | None = None, cpus: int | None = None,
            flags: Sequence[str] | None = None) -> list[str] | None:
    """The command that runs ``python -m stages.train argv`` on every rank, or ``None`` when this process
    should train itself (one rank, or already a rank of a ``torchrun``). ``flags``: extra ``torchrun``
    options (default :func:`torchrun_flags`)."""
    if train.world_size == 1 or "WORLD_SIZE" in env:
        return None
    procs = max(1, train.gpus_per_node)
    extra = torchrun_flags() if flags is None else list(flags)
    run = [python, "-m", "torch.distributed.run", f"--nproc-per-node={procs}", *extra]
    stage = ["-m", "stages.train", "--", *argv]  # `--`: torchrun would read `--log` as its own `--log-dir`
    if train.nodes == 1:
        return [*run, "--standalone", *stage]
    if "SLURM_JOB_ID" not in env:
        raise LaunchError(f"train.nodes = {train.nodes}: several nodes need a SLURM allocation "
                          "(snakemake --profile slurm); set train.nodes: 1 to train on this machine")
    host = host or socket.gethostname()
    cpus = cpus or len(os.sched_getaffinity(0))
    srun = ["srun", f"--nodes={train.nodes}", f"--ntasks={train.nodes}", "--ntasks-per-node=1",
            f"--cpus-per-task={cpus}", f"--gpus-per-node={procs}", "--kill-on-bad-exit=1"]
    rdzv = [f"--nnodes={train.nodes}", "--rdzv-backend=c10d", f"--rdzv-endpoint={host}:{rendezvous_port(env)}",
            f"--rdzv-id=lsnmt-{env['SLURM_JOB_ID']}"]
    return [*srun, *run, *rdzv, *stage]


def check_devices(train: TrainConfig) -> str:
    """``cuda`` when every local rank has a GPU, ``cpu`` when there is none (gloo ranks); raises
    :class:`LaunchError` when there are GPUs but fewer than ``train.gpus_per_node``."""
    import torch

    if not torch.cuda.is_available():
        return "cpu"
    found = torch.cuda.device_count()
    if found < train.gpus_per_node:
        raise LaunchError(f"train.gpus_per_node = {train.gpus_per_node}, but this node shows {found} GPU(s) "
                          f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})")
    return "cuda"
