"""The literal `snakemake --profile slurm` resolves ./slurm from the repository root and gives each rule its
resources; the site settings come from the environment; the CI overlay keeps the profile's shape."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT, copy_repo, venv_env

SITE = {"LSNMT_SLURM_PARTITION": "cpuq", "LSNMT_SLURM_GPU_PARTITION": "gpuq", "LSNMT_SLURM_ACCOUNT": "proj1",
        "LSNMT_SLURM_GPU_MODEL": "a100"}


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_repo(tmp_path_factory.mktemp("profile"))


def plan(repo: Path, *args: str, env: dict[str, str] | None = None) -> dict[str, str]:
    """rule -> the resources line of its first job in `snakemake ARGS -n -p` (no SLURM needed for a dry run)."""
    out = subprocess.run(["snakemake", *args, "-n", "-p"], cwd=repo, env={**venv_env(), **(env or {})},
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "Using profile slurm" in out.stderr, out.stderr[-2000:]
    found: dict[str, str] = {}
    for block in re.split(r"\n(?=(?:local)?rule \w+:)", out.stdout):
        head, res = re.match(r"(?:local)?rule (\w+):", block), re.search(r"^\s+resources: (.*)$", block, re.M)
        if head and res:
            found.setdefault(head.group(1), res.group(1))
    return found


def resources(line: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in line.split(", "))


def test_bare_profile_name_plans_with_per_rule_resources(repo: Path) -> None:
    jobs = {rule: resources(line) for rule, line in plan(repo, "--profile", "slurm").items()}
    train, translate, spm = jobs["train"], jobs["translate"], jobs["spm"]
    assert (train["gpu"], train["nodes"], train["cpus_per_gpu"], train["runtime"]) == ("1", "1", "8", "1440")
    assert train["slurm_extra"] == "--signal=TERM@300 --open-mode=append" and train["mem_mb_per_cpu"] == "4000"
    assert (translate["gpu"], translate["cpus_per_gpu"]) == ("1", "4")
    assert spm["mem_mb"] == "64000" and "gpu" not in spm  # attempt 1 of `attempt * 64000`
    assert train["slurm_partition"] == train["gpu_model"] == jobs["prepare"]["slurm_partition"] == ""


def test_site_settings_come_from_the_environment(repo: Path) -> None:
    jobs = {rule: resources(line) for rule, line in plan(repo, "--profile", "slurm", env=SITE).items()}
    assert (jobs["train"]["slurm_partition"], jobs["train"]["gpu_model"]) == ("gpuq", "a100")
    assert (jobs["translate"]["slurm_partition"], jobs["translate"]["gpu_model"]) == ("gpuq", "a100")
    assert jobs["encode"]["slurm_partition"] == "cpuq" and jobs["encode"]["slurm_account"] == "proj1"
    assert "gpu_model" not in jobs["encode"]


def _yaml(path: Path) -> dict:
    import yte

    with path.open() as fh:
        return yte.process_yaml(fh, require_use_yte=True)


def test_ci_overlay_has_the_profiles_rules_and_gpu_requests() -> None:
    real, ci = _yaml(ROOT / "slurm/config.yaml"), _yaml(ROOT / "tests/slurm/profile/config.yaml")
    assert set(ci["set-resources"]) == set(real["set-resources"])
    for rule, res in real["set-resources"].items():
        assert ci["set-resources"][rule].get("gpu") == res.get("gpu"), rule
        assert ("cpus_per_gpu" in ci["set-resources"][rule]) == ("cpus_per_gpu" in res), rule
    assert real["executor"] == "slurm" and real["rerun-incomplete"] and real["slurm-requeue"]
    assert real["slurm-logdir"] == "logs/slurm" and real["slurm-keep-successful-logs"]


def test_xelm_training_jobs_request_the_xelm_sections_gpus(tmp_path: Path) -> None:
    """lm_seed / lm_expert / lm_hmr / lm_lapt ask SLURM for ``xelm.gpus_per_node`` x ``xelm.nodes`` GPUs (the profile
    gives no fixed count); lm_eval stays on one GPU."""
    import yaml

    repo = copy_repo(tmp_path / "repo")
    params = yaml.safe_load((repo / "params.yaml").read_text(encoding="utf-8"))
    params["experiments"]["mc4_xelm"]["xelm"]["gpus_per_node"] = 2
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    jobs = {rule: resources(line) for rule, line in
            plan(repo, "--profile", "slurm", "--config", "experiment=mc4_xelm").items()}
    for rule in ("lm_seed", "lm_expert", "lm_hmr", "lm_lapt"):
        assert (jobs[rule]["gpu"], jobs[rule]["nodes"], jobs[rule]["cpus_per_gpu"]) == ("2", "1", "8"), rule
    assert jobs["lm_eval"]["gpu"] == "1"
