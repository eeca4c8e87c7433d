"""(--slow) Every experiment of params.yaml, and every paper, is planned by `snakemake -n` (a dry run: nothing is
downloaded, local data need not exist): one job per stage, one train and one translate job per method of the
experiment, and the train job asks for the GPUs and nodes that params.yaml gives it."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from lsnmt.experiment.params import Params

from .conftest import ROOT, copy_repo, venv_env

PARAMS = Params.load(ROOT / "params.yaml")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_repo(tmp_path_factory.mktemp("plan"))


def dry_run(repo: Path, *config: str) -> subprocess.CompletedProcess:
    cmd = ["snakemake", "-n", "-p", "--cores", "1", *(["--config", *config] if config else [])]
    return subprocess.run(cmd, cwd=repo, env=venv_env(), capture_output=True, text=True)


def job_counts(stdout: str) -> dict[str, int]:
    """The dry run's job stats table: rule -> jobs."""
    table = stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, re.M) if m.group(1) != "total"}


def expected_jobs(name: str) -> dict[str, int]:
    """Jobs of running experiment ``name``: translation where it has methods and training directions (the search
    where it defines one), NER / QA
    where it has tasks, x-elm where it has an ``xelm`` section, the small-scale claim where it has a ``claim``
    section (and for the experiment params.yaml selects, as DVC); the report always."""
    exp, jobs = PARAMS.get(name), {"report": 1}
    methods = PARAMS.methods_of(name)
    if methods and exp.data.train_directions != "none":
        jobs.update(dict.fromkeys(("download", "prepare", "sample", "spm", "encode", "evaluate"), 1),
                    train=len(methods), translate=len(methods))
        if exp.search or name == PARAMS.experiment:  # a search it defines (params.yaml's own: always, as DVC)
            jobs.update(search=1)
    if PARAMS.jobs_of(name, "tasks"):  # task_prep fetches the tasks' datasets itself (no download)
        jobs.update(task_prep=1, task_train=1, task_eval=1)
    if exp.xelm is not None:
        jobs.update(download=1, prepare=1, spm=1, lm_data=1, cluster=1, lm_seed=1, lm_lapt=1, lm_eval=1, lm_icl=1,
                    lm_expert=len(PARAMS.jobs_of(name, "xelm_experts")),
                    lm_hmr=len(PARAMS.jobs_of(name, "xelm_targets")))
    if exp.claim is not None or name == PARAMS.experiment:
        jobs.update(claim=1)
    return jobs


@pytest.mark.slow  # a dry-run sweep
@pytest.mark.parametrize("name", list(PARAMS.experiments))
def test_every_experiment_is_planned(repo: Path, name: str) -> None:
    out = dry_run(repo, f"experiment={name}")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    counts = job_counts(out.stdout)
    assert counts.get("params", 0) <= 1  # reports/params.csv is tracked: planned only when older than its code
    counts.pop("params", None)
    assert counts.pop("all") == 1
    assert counts == expected_jobs(name)
    train = PARAMS.get(name).train
    for block in re.split(r"\n(?=rule \w+:)", out.stdout):
        if block.startswith("rule train:"):
            assert f"gpu={train.gpus_per_node * train.nodes}, nodes={train.nodes}" in block, block
            assert f"wildcards: exp={name}, method=" in block


@pytest.mark.slow  # a dry-run sweep
@pytest.mark.parametrize("name", ["iwslt14", "opus100"])
def test_fd_family_is_trained_once_per_setting(repo: Path, name: str) -> None:
    """LMS-FD Tables 1-3: FD-LS and LMS+FD-LS are the LS routes of the FD / LMS+FD models (lsnmt.methods.systems),
    not trainings of their own: one train and one translate job per method; evaluate scores both routes."""
    from lsnmt.methods import systems

    out = dry_run(repo, f"experiment={name}")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    jobs = {rule: sorted(re.findall(rf"^rule {rule}:\n(?:\s+.*\n)*?\s+wildcards: exp={name}, method=(\w+)",
                                    out.stdout, re.M)) for rule in ("train", "translate")}
    methods = PARAMS.methods_of(name)
    assert jobs["train"] == jobs["translate"] == sorted(methods)
    exp = PARAMS.get(name)
    two_route = {m: [s.name for s in systems(exp.method_cfg, m)] for m in methods
                 if len(systems(exp.method_cfg, m)) == 2}
    want = {"fd": ["fd", "fd_ls"]} if name == "iwslt14" else {"lms_fd_d16": ["lms_fd_d16", "lms_fd_d16_ls"]}
    assert want.items() <= two_route.items() and two_route["lms_fd"] == ["lms_fd", "lms_fd_ls"]


@pytest.mark.slow  # a dry-run sweep
def test_a_paper_is_one_command(repo: Path) -> None:
    out = dry_run(repo, "paper=lmsfd")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    counts = job_counts(out.stdout)
    names = PARAMS.papers["lmsfd"]
    assert counts["evaluate"] == sum(expected_jobs(e).get("evaluate", 0) for e in names) == 3
    assert counts["task_eval"] == 1  # xlmr_tasks: NER and QA (LMS-FD Sec. 5.3-5.4)
    assert counts["train"] == sum(len(PARAMS.methods_of(e)) for e in names)
    assert counts["all"] == counts["report"] == 1


@pytest.mark.slow  # a dry-run sweep
def test_clm_trains_an_en_xx_and_an_xx_en_model_per_method(repo: Path) -> None:
    """CLM Sec. 4.1, 4.3, App. B: `paper=clm` trains every method of OPUS-100 and WMT-14 twice, a one-to-many model
    (`<exp>_enxx`, en-xx directions) and a many-to-one one (`<exp>_xxen`), with the papers' k (Tables 1, 2)."""
    out = dry_run(repo, "paper=clm")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    trained = set(re.findall(r"^rule train:\n(?:\s+.*\n)*?\s+wildcards: exp=(\w+), method=(\w+)", out.stdout, re.M))
    for base in ("opus100_clm", "wmt14"):
        methods = PARAMS.methods_of(f"{base}_enxx")
        assert "sclm" in methods and PARAMS.methods_of(f"{base}_xxen") == methods
        for side in ("enxx", "xxen"):
            assert {m for e, m in trained if e == f"{base}_{side}"} == set(methods), (base, side)
    assert {e for e, _ in trained} == {"opus100_clm_enxx", "opus100_clm_xxen", "wmt14_enxx", "wmt14_xxen",
                                       "iwslt17_zeroshot"}
    k = {e: PARAMS.get(e).method_cfg["sclm"].cfg.features for e in ("opus100_clm_enxx", "opus100_clm_xxen",
                                                                    "wmt14_enxx", "wmt14_xxen")}
    assert k == {"opus100_clm_enxx": 280, "opus100_clm_xxen": 560, "wmt14_enxx": 35, "wmt14_xxen": 70}


@pytest.mark.slow  # a dry-run sweep
def test_every_paper_is_planned(repo: Path) -> None:
    assert set(PARAMS.papers) == {"lmsfd", "clm", "lsl", "xelm"}
    planned = {e for names in PARAMS.papers.values() for e in names}
    assert planned == set(PARAMS.experiments) - {"default", "default_all", "default_gpu"}


@pytest.mark.slow  # a dry-run sweep
@pytest.mark.parametrize(("config", "message"), [
    (("methods=[naive]",), "--config/--configfile changed ['methods'], but the stages read params.yaml"),
    (("paper=nope",), "paper='nope' is not in params.yaml `papers`"),
    (("experiment=nope",), "experiment 'nope' is not defined in params.yaml"),
])
def test_command_line_settings_the_stages_would_not_see_are_refused(repo: Path, config: tuple, message: str) -> None:
    out = dry_run(repo, *config)
    assert out.returncode != 0 and message in out.stdout + out.stderr, out.stdout[-2000:] + out.stderr[-2000:]


def test_readme_gpu_hours_table_is_current() -> None:
    """docs/experiments.md's GPU-hours table (linked from the README)."""
    from lsnmt.report.gpu_hours import table

    readme = (ROOT / "docs" / "experiments.md").read_text()
    start = "<!-- gpu-hours: python -m lsnmt.report.gpu_hours -->\n"
    block = readme.split(start, 1)[1].split("\n<!-- /gpu-hours -->")[0]
    assert block == table(PARAMS), ("docs/experiments.md's GPU-hours table is stale: paste "
                                    "python -m lsnmt.report.gpu_hours")
