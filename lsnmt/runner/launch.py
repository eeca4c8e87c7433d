"""Training on several GPUs: the ``torchrun`` / ``srun`` command, and the SLURM request of a training rule.

``train.gpus_per_node`` (G) and ``train.nodes`` (N) in params.yaml fix the DDP world of a ``train`` job,
``W = max(1, G) * N`` ranks; ``xelm.gpus_per_node`` and ``xelm.nodes`` that of each x-elm LM training job
(``lm_seed``, ``lm_expert``, ``lm_hmr``, ``lm_lapt``: the authors' ``metaseq/scripts/train_xlbtm.sh`` takes
``NUM_NODES`` and ``NUM_GPUS`` per expert). Below, ``stages.train`` stands for the stage that relaunches itself.
``max_tokens`` is per rank, as fairseq's ``--max-tokens`` is per GPU, so the global batch is
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

import logging
import os
import shlex
import socket
import sys
from collections.abc import Mapping, Sequence
from typing import Protocol

from lsnmt.runner import lock

SHUTDOWN_TIMEOUT = 240
"""Seconds ``torchrun`` gives its ranks to exit after it forwards SIGTERM before it kills them (its default, 30,
can cut a large checkpoint's save short); the profile's ``--signal=TERM@300`` leaves 300 before the limit."""


class LaunchError(RuntimeError):
    """The requested world cannot be started here; the message names the params.yaml key."""


class World(Protocol):
    """The DDP world of one training job: ``TrainConfig`` (section ``train``) or ``XelmConfig`` (``xelm``)."""

    @property
    def gpus_per_node(self) -> int: ...

    @property
    def nodes(self) -> int: ...

    @property
    def world_size(self) -> int: ...


def job_resources(train: World) -> dict[str, int | str]:
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


def command(train: World, argv: Sequence[str], env: Mapping[str, str] = os.environ,
            python: str = sys.executable, host: str | None = None, cpus: int | None = None,
            flags: Sequence[str] | None = None, module: str = "stages.train",
            section: str = "train") -> list[str] | None:
    """The command that runs ``python -m <module> argv`` on every rank, or ``None`` when this process
    should train itself (one rank, or already a rank of a ``torchrun``). ``flags``: extra ``torchrun``
    options (default :func:`torchrun_flags`); ``section``: the params.yaml section errors name."""
    if train.world_size == 1 or "WORLD_SIZE" in env:
        return None
    procs = max(1, train.gpus_per_node)
    extra = torchrun_flags() if flags is None else list(flags)
    run = [python, "-m", "torch.distributed.run", f"--nproc-per-node={procs}", *extra]
    stage = ["-m", module, "--", *argv]  # `--`: torchrun would read `--log` as its own `--log-dir`
    if train.nodes == 1:
        return [*run, "--standalone", *stage]
    if "SLURM_JOB_ID" not in env:
        raise LaunchError(f"{section}.nodes = {train.nodes}: several nodes need a SLURM allocation "
                          f"(snakemake --profile slurm); set {section}.nodes: 1 to train on this machine")
    host = host or socket.gethostname()
    cpus = cpus or len(os.sched_getaffinity(0))
    srun = ["srun", f"--nodes={train.nodes}", f"--ntasks={train.nodes}", "--ntasks-per-node=1",
            f"--cpus-per-task={cpus}", f"--gpus-per-node={procs}", "--kill-on-bad-exit=1"]
    rdzv = [f"--nnodes={train.nodes}", "--rdzv-backend=c10d", f"--rdzv-endpoint={host}:{rendezvous_port(env)}",
            f"--rdzv-id=lsnmt-{env['SLURM_JOB_ID']}"]
    return [*srun, *run, *rdzv, *stage]


def check_devices(train: World, section: str = "train") -> str:
    """``cuda`` when every local rank has a GPU, ``cpu`` when there is none (gloo ranks); raises
    :class:`LaunchError` when there are GPUs but fewer than ``<section>.gpus_per_node``."""
    import torch

    if not torch.cuda.is_available():
        return "cpu"
    found = torch.cuda.device_count()
    if found < train.gpus_per_node:
        raise LaunchError(f"{section}.gpus_per_node = {train.gpus_per_node}, but this node shows {found} GPU(s) "
                          f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')})")
    return "cuda"


def relaunch(world: World, argv: Sequence[str], module: str, section: str) -> None:
    """Replace this process by the multi-rank launcher of ``python -m <module> argv`` when ``world`` asks for
    several ranks (and this is not already one of them); return when this process trains itself. A world that
    cannot start here logs the reason (naming ``<section>.<key>``) and exits with 2."""
    log = logging.getLogger(module)
    try:
        cmd = command(world, argv, module=module, section=section)
        if cmd is None:
            return
        device = check_devices(world, section)
    except LaunchError as exc:
        log.error("%s", exc)
        raise SystemExit(2) from None
    log.info("%d rank(s) on %s: %s", world.world_size, device, shlex.join(cmd))
    logging.shutdown()  # flush the log before exec; rank 0 appends to it
    lock.before_exec()  # the job's lock stays held until the launcher ends (its ranks take none)
    os.execvp(cmd[0], cmd)
