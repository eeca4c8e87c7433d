"""The embedded default through `snakemake --profile slurm` on the test cluster (tests/slurm/cluster.py).

    python -m tests.slurm.run [--steps N] [--keep DIR]     # by hand; tests/slurm/test_cluster.py calls run()

The CI variant of the default (:func:`ci_params`, written into a scratch copy of the repository), sized to keep
the step within about 15 minutes on two cores: no NER / QA tasks, x-elm with k = 2 only (5 experts, 20 updates
each), the LSL search as long as training, methods ``naive`` and ``lms`` (the plain model and one
language-specific method), 50 updates (what is tested is the cluster machinery, not the model), and
training on ``gpus_per_node: 2`` fake GPUs with ``max_tokens`` halved, so that the two gloo ranks keep the
default's 1,024-token batch and the run goes through the multi-GPU launcher (``torchrun``
inside the SLURM job).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

from tests.conftest import copy_repo, venv_env
from tests.slurm.cluster import LocalSlurm

CI_METHODS = ["naive", "lms"]
CI_EXPERTS = ["dense-k1-e0", "tfidf-k2-e0", "tfidf-k2-e1", "typology-k2-e0", "typology-k2-e1"]
XELM_UPDATES = 20
CI_STEPS = 50
PROFILE = ["--profile", "slurm", "--profile", "tests/slurm/profile"]
TIMEOUT = 1800
"""Seconds for the whole Snakemake run: a job whose state the plugin never learns fails the run instead of
blocking CI. About 15 minutes on two free cores; the limit leaves room for a busy machine."""


CLAIM_UPDATES = 40
"""Updates of each method of the claim stage in the CI run."""


def ci_params(text: str, steps: int | None = CI_STEPS) -> str:
    """params.yaml of the CI run (see the module docstring); ``steps=None`` keeps the default's own."""
    params = yaml.safe_load(text)
    # no NER / QA tasks (their stages run all the same, with nothing to do); x-elm with k = 2 only and a few updates
    params.update(methods=CI_METHODS, tasks=[], xelm_experts=CI_EXPERTS, xelm_targets=["he"])
    xelm = params["experiments"]["default"]["xelm"]
    xelm["experts"].update(k=[2], main_k=2, updates=XELM_UPDATES)
    xelm["ensemble"]["top_m"] = [1]
    for part in ("seed", "hmr"):
        xelm[part]["updates"] = XELM_UPDATES
    train = params["experiments"]["default"]["train"]
    train.update(gpus_per_node=2, max_tokens=train["max_tokens"] // 2)
    params["experiments"]["default"]["decode"]["max_sentences"] = 16
    claim = params["experiments"]["default"]["claim"]  # the small-scale claim: one seed, a few updates
    claim.update(seeds=[1])
    claim["train"].update(max_steps=CLAIM_UPDATES, validate_every=CLAIM_UPDATES, save_every=CLAIM_UPDATES,
                          log_every=CLAIM_UPDATES, warmup_steps=min(claim["train"]["warmup_steps"], CLAIM_UPDATES))
    if steps is not None:
        for search in params["experiments"]["default"]["search"].values():
            search["max_steps"] = steps
        train.update(max_steps=steps, warmup_steps=min(train["warmup_steps"], steps), validate_every=steps,
                     save_every=steps, log_every=steps)
    return yaml.safe_dump(params, sort_keys=False)


@dataclass
class Result:
    returncode: int
    output: str
    seconds: float
    jobs: list[dict[str, str]]
    """sacct rows of the run's jobs: JobID, JobName, State, AllocTRES, Comment."""


def _sacct(cluster: LocalSlurm, after: int = 0) -> list[dict[str, str]]:
    """sacct rows of the cluster's jobs with ids above ``after``."""
    fields = ["JobID", "State", "AllocTRES", "Comment"]
    out = cluster.run(["sacct", "-X", "-n", "-P", "--starttime", "now-1days", "-o", ",".join(fields)]).stdout
    rows = [dict(zip(fields, line.split("|"), strict=True)) for line in out.splitlines() if line.strip()]
    return [r for r in rows if int(r["JobID"].split("_")[0]) > after]


def start(repo: Path, *args: str) -> tuple[subprocess.Popen, float]:
    """Start ``snakemake --profile slurm --profile tests/slurm/profile ARGS`` in ``repo`` (its own session)."""
    env = {**venv_env(), "PATH": f"{venv_env()['PATH']}:/usr/sbin:/sbin"}
    proc = subprocess.Popen(["snakemake", *PROFILE, *args], cwd=repo, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    return proc, time.monotonic()


def finish(proc: subprocess.Popen, started: float, timeout: float = TIMEOUT) -> tuple[int, str, float]:
    """Wait for a :func:`start`-ed run; kill its whole session after ``timeout`` seconds."""
    try:
        out, _ = proc.communicate(timeout=max(1.0, timeout - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        out += f"\n[tests.slurm.run] killed after {timeout:.0f}s"
    return proc.returncode, out, time.monotonic() - started


def run(root: Path, steps: int | None = CI_STEPS, cluster: LocalSlurm | None = None) -> tuple[Path, Result]:
    """Copy the repository to ``root/repo``, write the CI params and run the pipeline on a test cluster."""
    repo = copy_repo(root / "repo")
    (repo / "params.yaml").write_text(ci_params((repo / "params.yaml").read_text(), steps))
    own = cluster is None
    cluster = cluster or LocalSlurm()
    try:
        if own:
            cluster.start()
        before = max((int(r["JobID"].split("_")[0]) for r in _sacct(cluster)), default=0)
        code, out, seconds = finish(*start(repo))
        return repo, Result(code, out, seconds, _sacct(cluster, before))
    finally:
        if own:
            cluster.stop()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.slurm.run")
    parser.add_argument("--steps", type=int, default=CI_STEPS, help=f"training updates (default {CI_STEPS})")
    parser.add_argument("--keep", default=None, help="run in this folder and keep it")
    args = parser.parse_args()
    import tempfile

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="lsnmt-slurm-run-"))
    root.mkdir(parents=True, exist_ok=True)
    repo, res = run(root, args.steps)
    print(res.output[-6000:])
    for job in res.jobs:
        print(job)
    print(f"snakemake exit {res.returncode} after {res.seconds:.0f}s; repository copy: {repo}")
    sys.exit(res.returncode)


if __name__ == "__main__":
    main()
