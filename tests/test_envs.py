"""The software environments (envs/): the conda file lists pyproject.toml's dependencies with torch pinned as
scripts/env.sh installs it, the container builds install torch first and then pyproject's dependencies, and every
Snakemake rule names the environment and the image, so that ``snakemake --lint`` reports nothing.

Building the images needs a container builder and the base image's registry; ``test_container_image_builds``
(``--slow``) builds envs/Dockerfile where docker, podman or buildah can, and is skipped, saying so, elsewhere."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement

from .conftest import ROOT, copy_repo, venv_env

ENVS = ROOT / "envs"


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _env_sh_torch() -> str:
    """scripts/env.sh's default torch (``${TORCH_SPEC:-torch==...}``)."""
    found = re.search(r"\$\{TORCH_SPEC:-([^}]+)\}", (ROOT / "scripts" / "env.sh").read_text(encoding="utf-8"))
    assert found, "scripts/env.sh has no ${TORCH_SPEC:-...} default"
    return found.group(1)


def test_conda_file_lists_pyprojects_dependencies_with_env_shs_torch() -> None:
    conda = yaml.safe_load((ENVS / "lsnmt.yaml").read_text(encoding="utf-8"))
    assert conda["name"] == "lsnmt" and "conda-forge" in conda["channels"]
    deps = conda["dependencies"]
    python = next(d for d in deps if isinstance(d, str) and d.startswith("python="))
    assert Requirement(f"python{_pyproject()['project']['requires-python']}").specifier.contains(
        python.split("=", 1)[1] + ".0"
    )
    assert "pip" in deps
    pip = next(d["pip"] for d in deps if isinstance(d, dict))
    ours = {Requirement(r).name: Requirement(r) for r in pip}
    theirs = {Requirement(r).name: Requirement(r) for r in _pyproject()["project"]["dependencies"]}
    assert list(ours) == list(theirs), "envs/lsnmt.yaml's pip list differs from pyproject.toml's dependencies"
    for name, req in theirs.items():
        if name != "torch":
            assert str(ours[name]) == str(req), name
    torch = ours["torch"]
    assert str(torch) == _env_sh_torch(), "the conda file pins another torch than scripts/env.sh installs"
    pinned = next(iter(torch.specifier)).version
    assert theirs["torch"].specifier.contains(pinned), f"torch {pinned} does not satisfy pyproject's {theirs['torch']}"


def test_container_builds_install_torch_first_then_pyprojects_dependencies() -> None:
    script = (ENVS / "install.sh").read_text(encoding="utf-8")
    assert f"${{TORCH_SPEC:-{_env_sh_torch()}}}" in script
    lines = script.splitlines()
    torch_at = next(i for i, line in enumerate(lines) if "pip install" in line and "TORCH_SPEC" in line)
    deps_at = next(i for i, line in enumerate(lines) if "pip install" in line and "-r /tmp/lsnmt-requirements" in line)
    assert torch_at < deps_at
    # the command that writes the requirements, run here on our pyproject.toml, gives exactly its dependencies
    command = next(line for line in lines if "tomllib" in line)
    code = re.search(r"-c '([^']+)'", command)
    assert code
    listed = subprocess.run(
        [sys.executable, "-c", code.group(1), str(ROOT / "pyproject.toml")], check=True, capture_output=True, text=True
    ).stdout.split()
    assert listed == _pyproject()["project"]["dependencies"]
    docker, apptainer = (ENVS / "Dockerfile").read_text(encoding="utf-8"), (ENVS / "lsnmt.def").read_text("utf-8")
    for text in (docker, apptainer):
        assert "install.sh" in text and "pyproject.toml" in text and _env_sh_torch() in text


def test_container_builds_install_the_dependencies_with_the_lock() -> None:
    """envs/install.sh installs pyproject's dependencies with ``-c`` the constraints file it is given, and both
    images copy envs/constraints.txt in and give it (as scripts/env.sh installs with ``-c envs/constraints.txt``)."""
    script = (ENVS / "install.sh").read_text(encoding="utf-8")
    assert re.search(r"^CONSTRAINTS=\$\{2:\?", script, re.M), "envs/install.sh takes no constraints file"
    deps = next(line for line in script.splitlines() if "pip install" in line and "-r /tmp/lsnmt-requirements" in line)
    assert deps.rstrip().endswith('-c "$CONSTRAINTS"'), deps
    docker = (ENVS / "Dockerfile").read_text(encoding="utf-8")
    copy = re.search(r"^COPY (.+) (\S+)/$", docker, re.M)
    assert copy and "envs/constraints.txt" in copy.group(1).split(), "envs/Dockerfile does not copy the lock"
    run = re.search(r"^RUN .*install\.sh (\S+) (\S+)$", docker, re.M)
    assert run and run.group(2) == f"{copy.group(2)}/constraints.txt", "envs/Dockerfile does not pass the lock"
    apptainer = (ENVS / "lsnmt.def").read_text(encoding="utf-8")
    files = apptainer.split("%files", 1)[1].split("%", 1)[0].split()
    assert "envs/constraints.txt" in files, "envs/lsnmt.def does not copy the lock"
    inside = files[files.index("envs/constraints.txt") + 1]
    post = apptainer.split("%post", 1)[1].split("%", 1)[0]
    assert re.search(rf"install\.sh \S+ {re.escape(inside)}\s*$", post.strip()), "envs/lsnmt.def does not pass the lock"


def _env_sh_stamp(folder: Path) -> str:
    """scripts/env.sh's install stamp, its own ``stamp=$(...)`` line run in ``folder``."""
    line = next(
        x for x in (ROOT / "scripts" / "env.sh").read_text(encoding="utf-8").splitlines() if x.startswith("stamp=")
    )
    out = subprocess.run(
        ["bash", "-c", f"set -euo pipefail; {line}; echo $stamp"],
        cwd=folder,
        check=True,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip()


def test_env_sh_reinstalls_when_the_lock_or_pyproject_changes(tmp_path: Path) -> None:
    """The stamp that decides whether env.sh reinstalls changes with envs/constraints.txt as with pyproject.toml."""
    (tmp_path / "envs").mkdir()
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(ENVS / "constraints.txt", tmp_path / "envs" / "constraints.txt")
    first = _env_sh_stamp(tmp_path)
    assert re.fullmatch(r"[0-9a-f]{64}", first) and _env_sh_stamp(tmp_path) == first
    with open(tmp_path / "envs" / "constraints.txt", "a", encoding="utf-8") as fh:
        fh.write("zzz-new-pin==1.0\n")
    second = _env_sh_stamp(tmp_path)
    assert second != first, "scripts/env.sh would not reinstall after envs/constraints.txt changed"
    with open(tmp_path / "pyproject.toml", "a", encoding="utf-8") as fh:
        fh.write("\n# changed\n")
    assert _env_sh_stamp(tmp_path) not in (first, second)


def test_every_rule_names_the_environment_and_the_image_and_lint_is_clean(tmp_path: Path) -> None:
    repo = copy_repo(tmp_path)
    out = subprocess.run(["snakemake", "--lint"], cwd=repo, env=venv_env(), capture_output=True, text=True)
    assert out.returncode == 0 and "Lints for" not in out.stdout + out.stderr, out.stdout[-3000:] + out.stderr[-3000:]
    text = (ROOT / "Snakefile").read_text(encoding="utf-8")
    assert re.findall(r"^rule (\w+):", text, re.M) == ["all"]  # it runs nothing; the stages' rules are one loop:
    assert "for _stage in STAGES:\n\n    rule:\n" in text and text.count("        conda:\n            ENV\n") == 1
    assert 'ENV = "envs/lsnmt.yaml"' in text and (ROOT / "envs" / "lsnmt.yaml").is_file()
    assert re.search(r'^container: os\.environ\.get\("LSNMT_CONTAINER"\) or "envs/lsnmt\.sif"', text, re.M)


BASE = "debian:bookworm-slim"
"""envs/Dockerfile's base image."""
PROBE = "import torch, sacrebleu, sentencepiece, fasttext, markdown_it, snakemake; print(torch.__version__)"


def _ok(*cmd: str) -> bool:
    return subprocess.run(cmd, capture_output=True).returncode == 0


def _tool() -> str | None:
    """A container builder that runs here: docker (with its daemon), buildah, podman."""
    if shutil.which("docker") and _ok("docker", "info"):
        return "docker"
    return next((t for t in ("buildah", "podman") if shutil.which(t)), None)


def _pip_args(tool: str) -> list[str]:
    """This machine's pip settings (index, mirror, wheel folder, CA bundle of a TLS proxy) as build args of
    envs/Dockerfile; a local path is mounted into the build under /opt/host (not over the image's own files, such
    as its CA bundle; buildah / podman: docker cannot mount)."""
    args: list[str] = []
    for var in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_CERT"):
        value = os.environ.get(var, "")
        if value and Path(value).exists():
            if tool == "docker":
                continue
            inside = f"/opt/host{Path(value).resolve()}"
            args += ["--volume", f"{value}:{inside}:ro"]
            value = inside
        if value:
            args += ["--build-arg", f"{var}={value}"]
    return args


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_container_image_builds() -> None:
    """envs/Dockerfile builds and its Python imports the pipeline's packages (minutes: downloads torch). Built and
    run with buildah's chroot isolation where buildah is the builder (no OCI runtime or cgroups needed)."""
    tool = _tool()
    if tool is None:
        pytest.skip("no container builder here (docker daemon, buildah or podman): envs/Dockerfile was NOT built")
    inspect = ["buildah", "inspect", "--type", "image"] if tool == "buildah" else [tool, "image", "inspect"]
    if not (_ok(*inspect, BASE) or _ok(tool, "pull", BASE)):
        pytest.skip(f"base image {BASE} neither present nor pullable here: envs/Dockerfile was NOT built")
    tag = "localhost/lsnmt-test:latest"
    build = {
        "docker": ["docker", "build"],
        "podman": ["podman", "build"],
        "buildah": ["buildah", "bud", "--isolation", "chroot"],
    }[tool]
    out = subprocess.run(
        [*build, *_pip_args(tool), "-f", "envs/Dockerfile", "-t", tag, "."], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    if tool == "buildah":
        ctr = subprocess.run(["buildah", "from", tag], capture_output=True, text=True, check=True).stdout.strip()
        try:
            done = subprocess.run(
                ["buildah", "run", "--isolation", "chroot", ctr, "--", "python", "-c", PROBE],
                capture_output=True,
                text=True,
            )
        finally:
            subprocess.run(["buildah", "rm", ctr], capture_output=True)
    else:
        done = subprocess.run([tool, "run", "--rm", tag, "python", "-c", PROBE], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip(), done.stdout[-2000:] + done.stderr[-2000:]


def _constraints() -> dict[str, str]:
    """envs/constraints.txt as ``{normalised name: version}``."""
    pins: dict[str, str] = {}
    for line in (ENVS / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, sep, version = line.partition("==")
            assert sep and version, f"envs/constraints.txt: {line!r} is not name==version"
            pins[re.sub(r"[-_.]+", "-", name).lower()] = version
    return pins


def test_constraints_pin_every_dependency_within_pyprojects_ranges() -> None:
    """The lock: every dependency (and test tool) at one exact version that pyproject.toml allows; torch stays
    scripts/env.sh's; scripts/env.sh installs with it."""
    pins = _constraints()
    project = _pyproject()["project"]
    for spec in [*project["dependencies"], *project["optional-dependencies"]["test"]]:
        req = Requirement(spec)
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        if name == "torch":
            assert name not in pins, "torch is pinned by scripts/env.sh (TORCH_SPEC), not by the constraints"
            continue
        assert name in pins, f"envs/constraints.txt does not pin {req.name}"
        assert req.specifier.contains(pins[name], prereleases=True), f"{req.name}=={pins[name]} is not {req}"
    assert "-c envs/constraints.txt" in (ROOT / "scripts" / "env.sh").read_text(encoding="utf-8")


def test_packaging_metadata_has_no_deprecated_license_table() -> None:
    """setuptools >= 77 warns (13 lines per build) on ``license = { text = ... }``; PEP 639's SPDX string is the
    form it asks for, and needs setuptools >= 77 to build."""
    data = _pyproject()
    assert isinstance(data["project"]["license"], str)
    assert any(
        Requirement(r).name == "setuptools" and not Requirement(r).specifier.contains("76.9")
        for r in data["build-system"]["requires"]
    )


def _fake_venv(folder: Path, pip_rc: int) -> None:
    """A repository copy whose ``.venv/bin/python`` has torch and whose pip writes 300 warning lines, then exits
    ``pip_rc``; the stamp is stale, so scripts/env.sh reinstalls the project."""
    (folder / "scripts").mkdir(parents=True)
    (folder / "envs").mkdir()
    for rel in ("scripts/env.sh", "pyproject.toml", "envs/constraints.txt"):
        (folder / rel).write_bytes((ROOT / rel).read_bytes())
    bin_dir = folder / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "activate").write_text("", encoding="utf-8")
    python = bin_dir / "python"
    python.write_text(
        "#!/usr/bin/env bash\n"
        f'if [ "$1" = -m ]; then for i in $(seq 300); do echo "WARNING: index $i is ignored"; done; exit {pip_rc}; fi\n'
        "exit 0\n",
        encoding="utf-8",
    )
    python.chmod(0o755)


def test_env_sh_keeps_pips_output_in_a_log_and_shows_its_end_on_failure(tmp_path: Path) -> None:
    """A (re)install prints one line per pip step, pip's own output goes to .venv/install.log; a failing pip stops
    the script with the log's end on stderr."""
    quiet, failing = tmp_path / "ok", tmp_path / "bad"
    for folder, rc in ((quiet, 0), (failing, 1)):
        _fake_venv(folder, rc)
    ok = subprocess.run(["bash", "-c", "source scripts/env.sh"], cwd=quiet, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    assert (ok.stdout + ok.stderr).count("\n") == 1 and "log: .venv/install.log" in ok.stderr
    assert (quiet / ".venv" / "install.log").read_text(encoding="utf-8").count("WARNING") == 300
    assert (quiet / ".venv" / ".lsnmt-installed").exists()
    bad = subprocess.run(["bash", "-c", "source scripts/env.sh"], cwd=failing, capture_output=True, text=True)
    assert bad.returncode != 0 and "failed; the end of .venv/install.log" in bad.stderr
    assert "WARNING: index 300 is ignored" in bad.stderr and "index 200 " not in bad.stderr
    assert not (failing / ".venv" / ".lsnmt-installed").exists()
