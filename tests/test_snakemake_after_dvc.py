"""Snakemake after a DVC run: rule ``all`` asks for each selected experiment's own results
(``lsnmt.graph.snakemake.Rules.final``), so ``snakemake -n --config experiment=X`` plans X's jobs where
``./run.sh`` (DVC) has already written the report; before, rule ``all`` asked for the report's files only and every
selection said "Nothing to be done". The fast test checks every experiment and paper of params.yaml; the slow one
runs a DVC run of the tiny experiment, then the README's Snakemake commands as dry runs."""

from __future__ import annotations

import functools
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml

from lsnmt.experiment.params import Params
from lsnmt.graph.dvc import render
from lsnmt.graph.snakemake import Rules
from lsnmt.typed import load_yaml

from .conftest import ROOT, copy_repo, venv_env

PARAMS = Params.load(ROOT / "params.yaml")
SELECTIONS = [("experiment", e) for e in PARAMS.experiments] + [("paper", p) for p in PARAMS.papers]


def targets_of(key: str, value: str) -> list[str]:
    return list(PARAMS.papers[value]) if key == "paper" else [value]


@functools.cache
def _load(path: Path) -> tuple[Params, dict]:
    return Params.load(path), load_yaml(path)


def rules(path: Path, targets: list[str], selected: str) -> Rules:
    """The Snakefile's :class:`Rules` for a run of ``targets`` with the params file ``path`` (resources are not
    looked at here)."""
    params, raw = _load(path)
    jobs = lambda e, k: list(params.jobs_of(e, k))  # noqa: E731
    return Rules(raw["experiments"], jobs, selected, params.experiment, targets, lambda e, s: {})


def own_results(rules: Rules, exp: str) -> list[str]:
    """What rule ``all`` asks of experiment ``exp``: its results, without the report's files."""
    return [p for p in rules.final() if p.startswith(f"results/{exp}/")]


@pytest.mark.parametrize(("key", "value"), SELECTIONS, ids=[f"{k}={v}" for k, v in SELECTIONS])
def test_rule_all_asks_for_each_selected_experiments_own_results(key: str, value: str) -> None:
    targets = targets_of(key, value)
    selected = value if key == "experiment" else PARAMS.experiment
    run = rules(ROOT / "params.yaml", targets, selected)
    final = run.final()
    for exp in targets:
        assert own_results(run, exp), f"rule all of {key}={value} asks for nothing of {exp}: {final}"
        if PARAMS.methods_of(exp) and PARAMS.get(exp).data.train_directions != "none":
            assert f"results/{exp}/metrics/evaluate" in final, final
        if PARAMS.get(exp).xelm is not None:
            assert f"results/{exp}/xelm/eval" in final, final
    assert "reports/index.html" in final and len(final) == len(set(final))


def readme_snakemake_commands() -> list[list[str]]:
    """Every ``snakemake ...`` line of the README's code blocks (comments stripped)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```bash\n(.*?)^```", readme, re.M | re.S)
    lines = [line.split("#", 1)[0].strip() for b in blocks for line in b.splitlines()]
    commands = [shlex.split(line) for line in lines if line.startswith("snakemake ")]
    assert len(commands) >= 4, commands
    return commands


def _tiny_in_full_params(repo: Path) -> None:
    """params.yaml of ``repo``: the project's, with the tests' tiny experiment added and selected (so that the
    README's experiments and papers stay defined), and dvc.yaml regenerated for it."""
    full = load_yaml(ROOT / "params.yaml")
    tiny = load_yaml(ROOT / "tests/fixtures/params.tiny.yaml")
    full["experiments"]["tiny"] = tiny["experiments"]["tiny"]
    for key in ("experiment", "methods", "tasks", "task_methods", "xelm_experts", "xelm_targets"):
        full[key] = tiny[key]
    (repo / "params.yaml").write_text(yaml.safe_dump(full, sort_keys=False), encoding="utf-8")
    (repo / "dvc.yaml").write_text(render(repo / "params.yaml"), encoding="utf-8")


def _run(repo: Path, cmd: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=repo, env=venv_env(), capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the repository after ``./run.sh``'s DVC path on the tiny experiment."""
    repo = copy_repo(tmp_path_factory.mktemp("after_dvc"))
    _tiny_in_full_params(repo)
    out = _run(repo, ["python", "-m", "lsnmt.graph.brief", "repro"])
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert (repo / "reports/index.html").is_file()
    return repo


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_readme_snakemake_commands_plan_their_experiments_after_a_dvc_run(ran: Path) -> None:
    params = Params.load(ran / "params.yaml")
    commands = []
    for cmd in [*readme_snakemake_commands(), ["snakemake", "--cores", "2", "--config", "experiment=default_all"]]:
        out = _run(ran, [*cmd, "-n"])
        text = out.stdout + out.stderr
        assert out.returncode == 0, f"{shlex.join(cmd)}:\n{text[-3000:]}"
        config = dict(c.split("=", 1) for c in cmd[cmd.index("--config") + 1 :]) if "--config" in cmd else {}
        if not config:  # the experiment DVC ran: nothing left to do
            assert "Nothing to be done" in text, f"{shlex.join(cmd)}:\n{text[-3000:]}"
            continue
        targets = list(params.papers[config["paper"]]) if "paper" in config else [config["experiment"]]
        selected = config.get("experiment", params.experiment)
        # an experiment with something of its own to run here (xlmr_tasks runs the top-level `tasks`, which the
        # tiny selection empties)
        expected = {e for e in targets if own_results(rules(ran / "params.yaml", targets, selected), e)}
        planned = set(re.findall(r"wildcards: exp=([\w.-]+)", text))
        assert expected and expected == planned, (
            f"{shlex.join(cmd)} planned {sorted(planned)}, not {expected}:\n{text[-3000:]}"
        )
        commands.append(shlex.join(cmd))
    assert len(commands) >= 4, commands  # iwslt14, paper=lmsfd, paper=clm, default_all
