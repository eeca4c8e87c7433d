"""The embedded default through the literal `snakemake --profile slurm` on a real one-node SLURM, and a training
job that SLURM requeues mid-run (run with --slurm: root, installs slurm-wlm, slurmdbd, munge and
mariadb-server when missing; about 15 minutes on two free cores).

The cluster (tests/slurm/cluster.py) has 2 CPUs and 2 fake GPUs; the CI overlay (tests/slurm/profile) sets its
partition, account and tiny resources; the CI params (tests/slurm/run.py) train `naive` and `lms` for 50
updates, each on two ranks. Afterwards DVC takes the cluster's outputs as its own (`dvc commit`) and plans a
sweep on them (tests/test_dvc_after_snakemake.py runs such a sweep, `dvc exp run -S`, on the tiny experiment).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import yaml

from tests.conftest import ROOT, copy_repo, use_params, venv_env
from tests.slurm.cluster import LocalSlurm
from tests.slurm.run import CI_EXPERTS, CI_METHODS, TIMEOUT, finish, run, start
from tests.wiring import commit_outputs_and_plan_a_sweep

pytestmark = pytest.mark.slurm

RULES = ["prepare", "sample", "spm", "encode", "search", *(["train"] * 2), *(["translate"] * 2), "evaluate",
         "task_train", "lm_data", "cluster", "lm_seed", *(["lm_expert"] * len(CI_EXPERTS)), "lm_hmr",
         "lm_lapt", "lm_eval", "lm_icl", "claim"]
"""Rules sent to SLURM (download, task_prep, params, task_eval and report are local rules: download and task_prep
fetch datasets, which a compute node may not reach). The task stages have nothing to do in the CI params; they
run all the same, writing their empty outputs, so that `dvc commit` finds every output of dvc.yaml's graph."""
ONE_GPU = ("translate", "search", "task_train", "lm_seed", "lm_expert", "lm_hmr", "lm_lapt", "lm_eval", "lm_icl")


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalSlurm]:
    with LocalSlurm() as c:
        yield c


@pytest.mark.timeout(TIMEOUT + 600)
def test_default_through_profile_slurm_then_dvc_commit(cluster: LocalSlurm, tmp_path: Path) -> None:
    repo, res = run(tmp_path, cluster=cluster)
    assert res.returncode == 0, res.output[-6000:]
    assert "Using profiles slurm and tests/slurm/profile" in res.output
    # one SLURM job per non-local job, all completed; the train jobs got two (fake) GPUs each
    rules = sorted(j["Comment"].split("_wildcards_")[0].removeprefix("rule_") for j in res.jobs)
    assert rules == sorted(RULES), res.jobs
    assert all(j["State"] == "COMPLETED" for j in res.jobs), res.jobs
    for job in res.jobs:
        rule = job["Comment"].split("_wildcards_")[0].removeprefix("rule_")
        gpus = 2 if rule == "train" else 1 if rule in ONE_GPU else 0
        assert (f"gres/gpu={gpus}" in job["AllocTRES"]) == (gpus > 0), job
    # logs per rule and per SLURM job; the trainer ran as two ranks under torchrun inside its job
    for method in CI_METHODS:
        log = (repo / f"logs/default/train/{method}.log").read_text()
        assert "2 rank(s) on cpu:" in log and "torch.distributed.run --nproc-per-node=2" in log
        assert len(list((repo / "logs/slurm/rule_train").glob(f"default_{method}/*.log"))) == 1
    summary = json.loads((repo / "results/default/evaluate/summary.json").read_text())
    assert summary["methods"] == CI_METHODS and summary["experiment"] == "default"
    assert (repo / "reports/params.csv").stat().st_size > 0
    # the report, built from the cluster's results: LMS-FD Table 1 has the default's naive and LMS cells
    assert "## LMS and Fuse Distillation" in (repo / "reports/README.md").read_text()
    table1 = (repo / "reports/tables/lmsfd/table1.md").read_text()
    assert "embedded default (NOT comparable" in table1 and "not run" in table1

    # DVC records the cluster's outputs: nothing left to run; a sweep on the default replans translation only
    commit_outputs_and_plan_a_sweep(repo, "default", CI_METHODS)
    print(f"snakemake --profile slurm: {res.seconds:.0f} s for {len(res.jobs)} SLURM jobs")


STEPS = 400
"""Updates of the tiny model in the requeue test: long enough to be interrupted after update 40 (about a minute;
SLURM then holds the requeued job back for about two)."""


def _train_job(cluster: LocalSlurm) -> str | None:
    for line in cluster.run(["squeue", "-h", "-t", "RUNNING", "-o", "%i %k"], check=False).stdout.splitlines():
        if "rule_train_" in line:
            return line.split()[0]
    return None


@pytest.mark.timeout(900)
def test_requeued_training_resumes_from_its_checkpoint(cluster: LocalSlurm, tmp_path: Path) -> None:
    """`scontrol requeue` (what preemption with PreemptMode=REQUEUE does): SLURM sends SIGTERM, the trainer
    saves last.pt and exits, the job goes back to the queue, its next run resumes; Snakemake sees it complete."""
    repo = copy_repo(tmp_path / "repo")
    use_params(repo, ROOT / "tests/fixtures/params.tiny.yaml")
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["experiments"]["tiny"]["train"].update(max_steps=STEPS, save_every=20, keep_last=200, log_every=100,
                                                  validate_every=200)
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    # the data stages locally (the first test sent them through SLURM): only the training job goes to the cluster
    subprocess.run(["snakemake", "--cores", "2", "data/tiny/bin"], cwd=repo, env=venv_env(), check=True,
                   capture_output=True)
    proc, started = start(repo, "results/tiny/train/naive/model.pt")
    work = repo / "work/tiny/ckpt/naive"
    while not (work / "step40.pt").exists():
        assert proc.poll() is None and time.monotonic() - started < 600, "training did not reach step 40"
        time.sleep(0.2)
    job = _train_job(cluster)
    assert job is not None
    cluster.run(["scontrol", "requeue", job])
    code, out, seconds = finish(proc, started, timeout=800)
    assert code == 0, out[-6000:]
    log = (repo / "logs/tiny/train/naive.log").read_text()  # the second run's
    assert "resumed from work/tiny/ckpt/naive/last.pt at step" in log, log[-2000:]
    resumed_at = int(log.split("at step ", 1)[1].split()[0])
    assert 40 <= resumed_at < STEPS
    slurm_log = (repo / f"logs/slurm/rule_train/tiny_naive/{job}.log").read_text()  # both runs: --open-mode=append
    assert f"stopped by SIGTERM after update {resumed_at}; checkpoint saved" in slurm_log, slurm_log[-3000:]
    assert torch.load(repo / "results/tiny/train/naive/model.pt", weights_only=False)["step"] == STEPS
    state = cluster.run(["sacct", "-X", "-n", "-P", "-j", job, "-o", "State"]).stdout.split()
    assert state[-1] == "COMPLETED", state
    print(f"requeued job {job}: resumed at update {resumed_at}; snakemake {seconds:.0f} s")
