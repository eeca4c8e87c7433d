"""Shared fixtures and the test tiers (fairseq2's switches): tests marked ``slow``, ``slurm`` or ``cuda`` are skipped
unless ``--slow``, ``--slurm`` or ``--device cuda`` is given.

* default: unit, maths, golden and tiny end-to-end tests, one learning floor per method kind and one real pipeline
  run through Snakemake (<= 3 minutes on 2 cores; README, "Tests"). ``./test.sh`` runs them on ``TEST_WORKERS``
  pytest-xdist workers (default ``auto``: one per core), each with its share of the cores (torch threads and
  ``OMP_NUM_THREADS``, :func:`pytest_configure`); tests marked ``long`` are collected first;
* ``--slow``: whole pipelines through both front ends, dry-run sweeps, torchrun and multi-process runs, every
  method's learning floor;
* ``--slurm``: the pipeline on a real one-node SLURM (root; installs Debian packages);
* ``--device cuda``: bf16 / fp16 autocast, the GradScaler, NCCL and decoding on a GPU (the ``device`` fixture).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true", help="also run tests marked slow")
    parser.addoption("--slurm", action="store_true",
                     help="also run tests marked slurm (a real one-node SLURM: root, apt-get; .ci/run does)")
    parser.addoption("--device", default="cpu",
                     help="device of the tests marked cuda, e.g. cuda or cuda:1 (default cpu: they are skipped)")


def pytest_configure(config: pytest.Config) -> None:
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    if workers:  # the cores shared out: with more threads than cores, tiny ops spin-wait for each other (the
        threads = max(1, (os.cpu_count() or 1) // workers)  # decoding tests took 8x as long beside another worker)
        torch.set_num_threads(threads)
        os.environ["OMP_NUM_THREADS"] = str(threads)  # and the Python subprocesses the tests start
    device = config.getoption("--device")
    if device != "cpu":
        if not device.startswith("cuda") or not torch.cuda.is_available():
            raise pytest.UsageError(f"--device {device}: only cpu or an available CUDA device (cuda, cuda:N)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.get_closest_marker("long") is None)  # stable: long tests first, else as collected
    switches = {"slow": "slow: run with --slow",
                "slurm": "real SLURM (root; installs and starts slurm-wlm, munge, mariadb): run with --slurm"}
    for mark, reason in switches.items():
        if config.getoption(f"--{mark}"):
            continue
        for item in items:
            if item.get_closest_marker(mark) is not None:
                item.add_marker(pytest.mark.skip(reason=reason))
    if config.getoption("--device") == "cpu":
        for item in items:
            if item.get_closest_marker("cuda") is not None:
                item.add_marker(pytest.mark.skip(reason="needs a GPU: run with --device cuda"))


@pytest.fixture
def device(request: pytest.FixtureRequest) -> torch.device:
    """The device given by ``--device`` (tests marked ``cuda`` run only when it is a CUDA device)."""
    return torch.device(request.config.getoption("--device"))


def run_record(rel: str) -> bool:
    """Whether ``rel`` was written by a run of the pipeline rather than being part of the code: ``dvc.lock``, the
    report stage's outputs and ``train.tracker: dvclive``'s folder (lsnmt/train/tracker.py), which Git does not
    ignore (``./run.sh`` before ``./test.sh`` leaves them)."""
    from lsnmt.graph.stages import STAGES

    fixed = [o.path for s in STAGES for o in s.outs if "{" not in o.path] + ["dvclive"]
    return rel == "dvc.lock" or any(rel == o or rel.startswith(o + "/") for o in fixed)


def copy_repo(dest: Path) -> Path:
    """Copy the tracked and untracked-not-ignored files of the repository to ``dest`` (a fresh work tree), less the
    untracked files a run of the pipeline wrote (:func:`run_record`): a copy starts with no record of the user's runs.
    """

    def listed(*flags: str) -> list[str]:
        out = subprocess.run(["git", "ls-files", *flags, "-z"], cwd=ROOT, check=True, capture_output=True).stdout
        return [f for f in out.decode().split("\0") if f]

    files = listed() + [f for f in listed("-o", "--exclude-standard") if not run_record(f)]
    for rel in files:
        src = ROOT / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    return dest


def use_params(repo: Path, params: Path) -> None:
    """Make ``params`` the params.yaml of the copy ``repo`` and regenerate its dvc.yaml: the ``params`` stage tracks
    the paper experiments that params.yaml defines (lsnmt.graph.stages.linked_keys), which a trimmed one lacks."""
    from lsnmt.graph.dvc import render

    shutil.copy(params, repo / "params.yaml")
    (repo / "dvc.yaml").write_text(render(repo / "params.yaml"), encoding="utf-8")


def venv_env() -> dict[str, str]:
    """Environment whose PATH starts with the interpreter's bin dir (python, snakemake, dvc)."""
    import sys

    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env
