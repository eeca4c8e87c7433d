"""Read the two front ends' view of the graph (Snakemake's dry run, DVC's resolved stages), and hand a finished
Snakemake run over to DVC."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from .conftest import venv_env


@dataclass(frozen=True)
class Step:
    name: str
    cmd: str
    outs: frozenset[str]
    deps: frozenset[str]


def _paths(match: re.Match[str] | None) -> frozenset[str]:
    return frozenset(x.strip() for x in match.group(1).split(",")) if match else frozenset()


def snakemake_steps(repo: Path, env: dict[str, str], *targets: str) -> dict[frozenset[str], Step]:
    """Every job of ``snakemake -n -p --forceall`` in ``repo``, keyed by its outputs."""
    out = subprocess.run(["snakemake", "-n", "-p", "--forceall", "--cores", "1", *targets], cwd=repo, env=env,
                         capture_output=True, text=True)
    if out.returncode:
        raise AssertionError(f"snakemake dry run failed:\n{out.stdout}\n{out.stderr}")
    steps = {}
    for block in re.split(r"\n(?=rule \w+:|localrule \w+:)", out.stdout):
        head = re.match(r"(?:local)?rule (\w+):", block)
        cmd = re.search(r"^Shell command: (.*)$", block, re.M) or re.search(r"^\s+(python -m .*)$", block, re.M)
        if not head or head.group(1) == "all":
            continue
        field = {k: re.search(rf"^\s+{k}: (.*)$", block, re.M) for k in ("input", "output")}
        step = Step(head.group(1), cmd.group(1).strip() if cmd else "", _paths(field["output"]), _paths(field["input"]))
        steps[step.outs] = step
    return steps


def dvc_steps(repo: Path) -> dict[frozenset[str], Step]:
    """Every stage of dvc.yaml in ``repo`` with ``${...}`` resolved from params.yaml, keyed by its outputs
    (plots and metrics included); a matrix stage ``train@naive`` is named by its base name ``train``. ``cmd`` is the
    stage's own command, the last of a ``cmd`` list (whose first is the name guard, ``lsnmt.graph.guard``)."""
    from dvc.repo import Repo

    with Repo(str(repo)) as r:
        steps = [Step(s.name.split("@")[0], s.cmd[-1] if isinstance(s.cmd, list) else s.cmd,
                      frozenset(str(o.def_path) for o in s.outs), frozenset(str(d.def_path) for d in s.deps))
                 for s in r.index.stages]
    return {s.outs: s for s in steps}


def run(repo: Path, *cmd: str) -> str:
    out = subprocess.run(cmd, cwd=repo, env=venv_env(), capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(cmd)}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout + out.stderr


def commit_outputs_and_plan_a_sweep(repo: Path, exp: str, methods: list[str]) -> None:
    """`dvc commit` a finished Snakemake run, then check that a decoding change replans translation only
    (`dvc repro --dry` on params.yaml edited as `dvc exp run -S` would; the file is restored)."""
    run(repo, "dvc", "commit", "--force")
    assert "up to date" in run(repo, "dvc", "status").lower()
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@localhost"]
    run(repo, *git, "add", "-A")
    run(repo, *git, "commit", "-qm", "a finished run, recorded by dvc commit")
    text = (repo / "params.yaml").read_text()
    params = yaml.safe_load(text)
    params["experiments"][exp]["decode"]["beam"] = 1
    (repo / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    dry = run(repo, "dvc", "repro", "--dry")
    (repo / "params.yaml").write_text(text)
    stages = {line.split("'")[1] for line in dry.splitlines() if line.startswith("Running stage")}
    translate = {f"translate@{m}" for m in methods}
    assert translate <= stages <= translate | {"evaluate"}, dry
