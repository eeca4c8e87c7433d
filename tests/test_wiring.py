"""Snakefile and dvc.yaml declare the same stages: names, commands, outputs and data inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import ROOT, copy_repo, venv_env
from .wiring import dvc_steps, snakemake_steps


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    repo = copy_repo(tmp_path_factory.mktemp("wiring"))
    return snakemake_steps(repo, venv_env()), dvc_steps(repo)


@pytest.fixture(scope="module")
def both_all(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, dict]:
    """The two front ends on experiment ``default_all`` (every method, FD and LMS+FD included: the CPU default
    trains one method per family and leaves FD out), selected as ``dvc exp run -S`` would."""
    import yaml

    from lsnmt.experiment.params import Params

    repo = copy_repo(tmp_path_factory.mktemp("wiring_all"))
    path = repo / "params.yaml"
    raw, params = yaml.safe_load(path.read_text(encoding="utf-8")), Params.load(path)
    raw["experiment"] = "default_all"
    for key in ("methods", "tasks", "task_methods", "xelm_experts", "xelm_targets"):
        raw[key] = list(params.jobs_of("default_all", key))
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return snakemake_steps(repo, venv_env()), dvc_steps(repo)


def test_same_jobs_with_the_same_outputs(both) -> None:
    smk, dvc = both
    assert set(smk) == set(dvc), "the two front ends declare different outputs"
    assert {s.name for s in dvc.values()} >= {"download", "prepare", "sample", "spm", "encode", "train", "translate",
                                              "params", "claim", "report"}


def test_same_names_and_commands(both) -> None:
    smk, dvc = both
    for outs, step in dvc.items():
        assert smk[outs].name == step.name, outs
        assert smk[outs].cmd == step.cmd, step.name


def test_same_data_and_code_inputs(both) -> None:
    """Data and code: both read them from the stage table (lsnmt/graph/stages.py, lsnmt/graph/imports.py)."""
    smk, dvc = both

    def pick(deps: frozenset[str]) -> set[str]:
        return set(deps) - {"params.yaml"}  # DVC's params dependency (test_graph.py checks the keys)

    def covers(d: str, e: str) -> bool:  # DVC may depend on a parent folder of several Snakemake inputs
        return e == d or e.startswith(d.rstrip("/") + "/")

    for outs, step in dvc.items():
        ours, theirs = pick(smk[outs].deps), pick(step.deps)
        assert all(any(covers(d, e) for d in theirs) for e in ours), (step.name, ours - theirs)
        assert all(any(covers(d, e) for e in ours) for d in theirs), (step.name, theirs - ours)


def test_every_rule_logs(both) -> None:
    smk, _ = both
    for step in smk.values():
        assert "--log logs/" in step.cmd and step.name in step.cmd, step.cmd


def test_sections_tracked_by_dvc_exist_in_every_experiment() -> None:
    import re

    import yaml

    root = Path(__file__).resolve().parent.parent
    params = yaml.safe_load((root / "params.yaml").read_text())
    tracked = set(re.findall(r"experiments\.\$\{experiment\}\.(\w+)", (root / "dvc.yaml").read_text()))
    for name, exp in params["experiments"].items():
        missing = tracked - set(exp)
        assert not missing, f"experiments.{name} lacks sections {missing} that dvc.yaml tracks (write them, even {{}})"


def test_fd_family_trains_once_and_both_routes_reach_evaluate(both_all) -> None:
    """LMS-FD Sec. 3.2, 5: FD and LMS+FD get one train and one translate job in both front ends; the LS route's
    hypotheses lie inside that translate output (``lsnmt.methods.System.hyp_dir``), which evaluate reads."""
    from lsnmt.experiment.params import Params
    from lsnmt.methods import systems

    root = Path(__file__).resolve().parent.parent
    params = Params.load(root / "params.yaml")
    exp, methods = params.get("default_all"), params.methods_of("default_all")
    scored = [s for m in methods for s in systems(exp.method_cfg, m)]
    assert {"fd", "fd_ls", "lms_fd", "lms_fd_ls"} <= {s.name for s in scored}  # both FD-family methods, two routes
    for front in both_all:
        trained = sorted(o.split("/")[3] for s in front.values() if s.name == "train" for o in s.outs
                         if o.endswith("model.pt"))
        assert trained == sorted(methods) and "fd_ls" not in trained and "lms_fd_ls" not in trained
        translated = {o for s in front.values() if s.name == "translate" for o in s.outs}
        (evaluate,) = (s for s in front.values() if s.name == "evaluate")
        for system in scored:
            hyp = system.hyp_dir(Path("results") / exp.name).as_posix()
            assert any(hyp == o or hyp.startswith(o + "/") for o in translated), system
            assert any(hyp == d or hyp.startswith(d.rstrip("/") + "/") for d in evaluate.deps), system


def test_the_report_reads_the_claim(both) -> None:
    """The small-scale claim (ours only) is one job of the selected experiment, an input of the report, in both."""
    for front in both:
        (claim,) = (s for s in front.values() if s.name == "claim")
        (report,) = (s for s in front.values() if s.name == "report")
        assert claim.outs == {"results/default/claim", "results/default/metrics/claim"}
        assert "results/default/claim" in report.deps


TOY = '''

STAGES = (*STAGES, Stage(name="toy", log="logs/{exp}/toy.log", deps=("data/{exp}/prepared",),
                         outs=_outs("results/{exp}/toy"), params=("data",)))
BY_NAME = {s.name: s for s in STAGES}
'''


def test_a_new_stage_is_one_table_row_and_its_module(tmp_path: Path) -> None:
    """A toy row appended to the stage table (and its stages/toy.py) is a job of both front ends, with the same
    command, outputs and inputs, the Snakefile untouched: its rules are made from the table."""
    import subprocess

    repo = copy_repo(tmp_path / "repo")
    with (repo / "lsnmt/graph/stages.py").open("a", encoding="utf-8") as f:
        f.write(TOY)
    toy = '"""A toy stage."""\n\nfrom lsnmt.experiment.stage import run\n'
    (repo / "stages/toy.py").write_text(toy, encoding="utf-8")
    subprocess.run(["python", "-m", "lsnmt.graph.dvc"], cwd=repo, env=venv_env(), check=True)
    assert (repo / "Snakefile").read_bytes() == (ROOT / "Snakefile").read_bytes()
    smk, dvc = snakemake_steps(repo, venv_env()), dvc_steps(repo)
    key = frozenset({"results/default/toy"})
    assert smk[key].name == dvc[key].name == "toy"
    assert smk[key].cmd == dvc[key].cmd == "python -m stages.toy --experiment default --log logs/default/toy.log"
    assert "data/default/prepared" in smk[key].deps and "data/default/prepared" in dvc[key].deps
    assert {"stages/toy.py", "lsnmt/experiment/stage.py"} <= smk[key].deps and "stages/toy.py" in dvc[key].deps


def test_a_stage_the_experiment_does_not_define_plans_no_job(tmp_path: Path) -> None:
    """iwslt14 defines no search, no task and no x-elm: `snakemake -n --config experiment=iwslt14` plans none of
    those jobs (under SLURM a search job was one GPU for a day that all its trainings waited behind), and no
    training reads results/iwslt14/search. (DVC's graph is static: there an empty search writes index.json only,
    tests/test_search.py.)"""
    repo = copy_repo(tmp_path / "repo")
    smk = snakemake_steps(repo, venv_env(), "--config", "experiment=iwslt14")
    names = {s.name for s in smk.values()}
    assert {"train", "translate", "evaluate", "report"} <= names
    assert not names & {"search", "task_prep", "task_train", "task_eval", "claim", "lm_data", "lm_expert"}, names
    assert not [s for s in smk.values() if any("/search" in d for d in s.deps)]
