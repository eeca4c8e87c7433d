"""The stage table (lsnmt/graph/): dvc.yaml is generated from it and current, each stage tracks exactly the
params.yaml keys it reads, and its code deps are what its stage module imports (issue 17)."""

from __future__ import annotations

from pathlib import Path

from lsnmt.graph.dvc import render
from lsnmt.graph.imports import module_files
from lsnmt.graph.snakemake import params
from lsnmt.graph.stages import STAGES

from .conftest import ROOT


def test_dvc_yaml_is_generated_and_current() -> None:
    assert (ROOT / "dvc.yaml").read_text(encoding="utf-8") == render(), \
        "dvc.yaml is stale: run `python -m lsnmt.graph.dvc` (it is generated from lsnmt/graph/stages.py)"


def test_each_dvc_stage_tracks_exactly_its_keys() -> None:
    """train@<m> tracks method_cfg.<m> (not the other methods'), translate the decoding keys, download no model."""
    from dvc.repo import Repo

    with Repo(str(ROOT)) as repo:
        tracked = {s.name: {p for d in s.deps if hasattr(d, "params") for p in (d.params or [])}
                   for s in repo.index.stages}
    exp = "experiments.default"
    assert tracked["train@lms"] == {f"{exp}.{k}" for k in ("data", "model", "train", "method_cfg.lms")}
    assert tracked["train@naive"] == {f"{exp}.{k}" for k in ("data", "model", "train", "method_cfg.naive")}
    # translate reads train's max_target_positions (the hypotheses' cap) and max_steps (TranslateView)
    assert tracked["translate@lms"] == {f"{exp}.{k}" for k in ("data", "model", "decode", "method_cfg.lms", "train")}
    assert not any("method_cfg" in p or ".model" in p for p in tracked["download"])
    assert f"{exp}.evaluate.metrics" in tracked["download"]  # it fetches the spBLEU model the metrics name


def test_every_experiment_writes_out_every_key_dvc_tracks(tmp_path: Path) -> None:
    """DVC reads params.yaml as written: a tracked key an experiment leaves to the config's defaults stops
    `dvc repro` before any stage ("Parameters ... are missing"). The slow tier found it for the tasks fixture."""
    from lsnmt.graph.dvc import missing_keys

    files = [ROOT / "params.yaml", *sorted((ROOT / "tests" / "fixtures").rglob("params*.yaml"))]
    assert len(files) >= 3
    assert {f.name: missing_keys(f) for f in files} == {f.name: [] for f in files}
    gap = tmp_path / "params.yaml"
    gap.write_text("experiments:\n  lm:\n    data: {}\n    evaluate: {}\n", encoding="utf-8")
    assert "experiments.lm.evaluate.metrics" in missing_keys(gap)
    assert "experiments.lm.data" not in missing_keys(gap)


def test_the_params_stage_tracks_the_counted_paper_configurations_only() -> None:
    """reports/params.csv counts the experiments counts.yaml links: the params stage tracks their sections (not
    params.yaml whole, so a decoding edit does not rerun it), and none with a trimmed params.yaml (the tiny one)."""
    import yaml

    from lsnmt.graph.stages import BY_NAME, linked_experiments

    stage = BY_NAME["params"]
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["experiments"]
    linked = linked_experiments(raw)
    assert {"iwslt14", "opus100", "wmt14_enxx", "flores10_lsl", "xlmr_tasks"} <= set(linked)
    assert "default" not in linked and "params.yaml" not in stage.deps
    rendered = render()
    assert all(f"      - experiments.{e}.{s}\n" in rendered for e in linked for s in stage.linked)
    assert "experiments.iwslt14.decode" not in rendered
    tiny = render(ROOT / "tests/fixtures/params.tiny.yaml")
    assert "experiments.iwslt14" not in tiny and tiny.count("\n") < rendered.count("\n")
    got = {k: f({}) for k, f in params("params", raw, lambda e, k: [], "default").items()}
    assert set(got) == {f"linked_{e}" for e in linked}
    assert got["linked_iwslt14"]["method_cfg"] == raw["iwslt14"]["method_cfg"]


def test_snakemake_params_are_the_jobs_own_keys() -> None:
    experiments = {"e": {"model": {"embed_dim": 8}, "train": {}, "data": {}, "method_cfg": {"lms": {"rank": 4}}}}
    got = {k: f(dict(exp="e", method="lms"))  # Snakemake wildcards: .items()
           for k, f in params("train", experiments, lambda e, k: [], "e").items()}
    assert got == {"data": {}, "model": {"embed_dim": 8}, "train": {}, "method_cfg": {"rank": 4}}


def test_every_stage_has_a_module_and_a_log() -> None:
    for stage in STAGES:
        assert (ROOT / "stages" / f"{stage.name}.py").is_file(), stage.name
        assert stage.log.startswith("logs/") and stage.name in stage.log


def test_code_deps_follow_every_import(tmp_path: Path) -> None:
    """Function-local imports count (they run); ``if TYPE_CHECKING:`` ones do not."""
    for rel, text in {"stages/__init__.py": "", "stages/x.py": "def f():\n    from lsnmt import a\n",
                      "lsnmt/__init__.py": "", "lsnmt/a.py": "from typing import TYPE_CHECKING\nfrom . import b\n"
                      "if TYPE_CHECKING:\n    from lsnmt import c\n",
                      "lsnmt/b.py": "import models.m\n", "lsnmt/c.py": "", "models/__init__.py": "",
                      "models/m.py": ""}.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    assert module_files("stages.x", tmp_path) == ("lsnmt/__init__.py", "lsnmt/a.py", "lsnmt/b.py",
                                                  "models/__init__.py", "models/m.py", "stages/__init__.py",
                                                  "stages/x.py")


def test_translate_plans_every_system_of_a_method_with_a_top_w_sweep() -> None:
    """CLM Figure 4: translate@sclm (one job per method in both front ends) writes every sweep point's hypotheses
    under its declared folder, tracks the method's entry (editing ``sweep_top_w`` reruns it), and evaluate reads the
    folder; so no extra job is needed and none is missed (``snakemake -n`` sweeps: tests/test_experiments.py)."""
    import yaml

    from lsnmt import methods
    from lsnmt.experiment.params import Params
    from lsnmt.graph.stages import BY_NAME
    from models.config import kinds

    loaded = Params.load(ROOT / "params.yaml")
    raw = yaml.safe_load((ROOT / "params.yaml").read_text(encoding="utf-8"))["experiments"]
    translate, evaluate = BY_NAME["translate"], BY_NAME["evaluate"]
    swept = {(e, m) for e, exp in loaded.experiments.items() for m in loaded.jobs_of(e, "methods")
             if kinds.sweep(*methods.resolve(exp.method_cfg, m))}
    assert {("opus100_clm_enxx", "sclm"), ("opus100_clm_xxen", "sclm")} <= swept
    for e, m in swept:
        (out,) = (Path(o.path.format(exp=e, method=m)) for o in translate.outs)
        sweep = [s for s in methods.systems(loaded.get(e).method_cfg, m) if s.top_w is not None]
        assert len(sweep) == len(raw[e]["method_cfg"][m]["sweep_top_w"])
        assert all(s.hyp_dir(Path("results") / e).parent == out for s in sweep)
        job = {k: f(dict(exp=e, method=m)) for k, f in params("translate", raw, lambda x, k: [], e).items()}
        assert job["method_cfg"]["sweep_top_w"] == [s.top_w for s in sweep]  # Snakemake's rerun trigger
        assert "method_cfg.{method}" in translate.params and "results/{exp}/translate" in evaluate.deps


def test_bytecode_and_snakemakes_markers_are_no_part_of_the_graph() -> None:
    """A run that writes ``__pycache__`` (PYTHONDONTWRITEBYTECODE unset, e.g. in the container) must not change the
    hash of a code folder dvc.yaml lists (``lsnmt/eval``), nor Snakemake's ``.snakemake_timestamp`` that of an
    output folder: .dvcignore leaves both out."""
    import subprocess

    from .conftest import venv_env

    def ignored(path: str) -> bool:
        out = subprocess.run(["dvc", "check-ignore", path], cwd=ROOT, env=venv_env(), capture_output=True)
        return out.returncode == 0

    assert ignored("lsnmt/eval/__pycache__/scores.cpython-311.pyc") and not ignored("lsnmt/eval/scores.py")
    assert ignored("results/default/metrics/evaluate/.snakemake_timestamp")  # Snakemake's directory marker


def test_no_code_dependency_is_an_empty_file() -> None:
    """DVC warns "'<file>' is empty." for each empty dependency each time it saves a stage (4 ``__init__.py`` files
    made 12 warnings per stage, a quarter of a default run's log): every file a stage runs has a docstring."""
    empty = sorted({f for s in STAGES for f in module_files(f"stages.{s.name}") if not (ROOT / f).stat().st_size})
    assert not empty, f"empty code dependencies (give each a docstring): {empty}"


def test_a_dvc_run_warns_of_no_empty_file(tmp_path: Path) -> None:
    """The same in DVC's own log: `dvc repro download` (the embedded corpora, seconds) in a copy."""
    import subprocess

    from .conftest import copy_repo, venv_env

    repo = copy_repo(tmp_path / "repo")
    out = subprocess.run(["dvc", "repro", "download"], cwd=repo, env=venv_env(), capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "is empty" not in out.stdout + out.stderr, out.stdout + out.stderr
