"""The data pipeline end to end, through Snakemake and through DVC, on real embedded data.

The default tier runs the tiny experiment (tests/fixtures/params.tiny.yaml: 3 languages, <= 1000 pairs each, every
stage) once, through Snakemake; ``--slow`` runs it through both front ends and compares them byte for byte, and runs
the real ``default`` experiment of params.yaml the same way.
"""

from __future__ import annotations

import filecmp
import json
import re
import subprocess
from pathlib import Path

import pytest

from .conftest import ROOT, copy_repo, use_params, venv_env

STAGES = ("data/{exp}/raw", "data/{exp}/prepared", "data/{exp}/sampled", "data/{exp}/spm", "data/{exp}/bin",
          "results/{exp}/search", "results/{exp}/translate/naive", "results/{exp}/evaluate", "reports", "data/{exp}/lm",
          "results/{exp}/xelm/eval", "results/{exp}/xelm/icl")


def _run(cmd: list[str], cwd: Path) -> str:
    out = subprocess.run(cmd, cwd=cwd, env=venv_env(), capture_output=True, text=True)
    assert out.returncode == 0, f"{' '.join(cmd)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout + out.stderr


def _tree(root: Path) -> set[str]:
    """Files under ``root``, less Snakemake's marker for directory outputs."""
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != ".snakemake_timestamp"}


def _both_front_ends(tmp: Path, params: Path | None, exp: str) -> tuple[Path, Path, str]:
    smk, dvc = copy_repo(tmp / "smk"), copy_repo(tmp / "dvc")
    if params is not None:
        for repo in (smk, dvc):
            use_params(repo, params)
    _run(["snakemake", "--cores", "2"], smk)
    _run(["dvc", "repro"], dvc)
    again = _run(["dvc", "repro"], dvc)
    return smk, dvc, again


WALL_TIME = re.compile(r"[0-9.]+ minutes of stage time")
"""The one measured number of the report: the scale line of the answer that opens reports/index.html and
reports/README.md sums the stages' wall times."""


def _check_same_outputs(a: Path, b: Path, exp: str) -> None:
    """Both front ends wrote the same files with the same bytes (training is deterministic on CPU), less the wall
    time in the answer's scale line (the page and README.md of each are compared with that number masked)."""
    for stage in (s.format(exp=exp) for s in STAGES):
        assert _tree(a / stage) == _tree(b / stage), stage
        files = sorted(_tree(a / stage))
        match, mismatch, errors = filecmp.cmpfiles(a / stage, b / stage, files, shallow=False)
        timed = [f for f in mismatch if f in ("index.html", "README.md")]  # both open with the answer
        for f in timed:
            pages = [WALL_TIME.sub("N minutes of stage time", (r / stage / f).read_text(encoding="utf-8"))
                     for r in (a, b)]
            assert pages[0] == pages[1], f"{stage}/{f} differs between Snakemake and DVC beyond the stage time"
        mismatch = [f for f in mismatch if f not in timed]
        assert not mismatch and not errors, f"{stage}: {mismatch or errors} differ between Snakemake and DVC"


@pytest.mark.long
@pytest.mark.timeout(900)  # every stage of the tiny experiment once: ~30 jobs, each a Python start
def test_tiny_pipeline_snakemake(tmp_path: Path) -> None:
    smk = copy_repo(tmp_path / "smk")
    use_params(smk, ROOT / "tests" / "fixtures" / "params.tiny.yaml")
    _run(["snakemake", "--cores", "2"], smk)
    _check_tiny(smk)
    assert all((smk / s.format(exp="tiny")).is_dir() for s in STAGES)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # translation and x-elm, twice: about 14 minutes on a busy 2-core machine
def test_tiny_pipeline_snakemake_and_dvc(tmp_path: Path) -> None:
    smk, dvc, again = _both_front_ends(tmp_path, ROOT / "tests" / "fixtures" / "params.tiny.yaml", "tiny")
    _check_same_outputs(smk, dvc, "tiny")
    import torch

    weights = [torch.load(r / "results/tiny/train/naive/model.pt", weights_only=False)["model"] for r in (smk, dvc)]
    assert weights[0].keys() == weights[1].keys()
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])  # CPU training is deterministic
    assert "up to date" in again.lower() or "didn't change" in again.lower(), again
    _check_tiny(smk)
    for repo in (smk, dvc):
        _check_lsl_nas(repo)


def _check_tiny(smk: Path) -> None:
    """The outputs of the tiny experiment in ``smk``: shards, sampling, hypotheses, scores, report, LSL, x-elm."""
    a = smk / "data" / "tiny"
    meta = json.loads((a / "bin" / "meta.json").read_text())
    assert meta["languages"] == ["en", "de", "sw"]
    assert set(meta["shards"]) >= {"train/en-de.src", "train/sw-en.tgt", "valid/en-sw.src", "test/de-en.tgt"}
    assert meta["shards"]["test/de-en.src"]["sentences"] == 50
    sampling = json.loads((a / "sampled" / "sampling.json").read_text())["directions"]
    assert sampling["en-sw"]["m"] > sampling["en-sw"]["n"]  # 387 sw pairs vs 1000 de pairs: up-sampled at T=2
    assert (smk / "logs" / "tiny" / "encode.log").stat().st_size > 0
    hyps = smk / "results" / "tiny" / "translate" / "naive"
    assert sorted(p.name for p in hyps.iterdir() if p.suffix == ".hyp") == [
        "de-en.hyp", "de-sw.hyp", "en-de.hyp", "en-sw.hyp", "sw-en.hyp"]
    assert all(len((hyps / f).read_text().split("\n")) == 11 for f in ("de-en.hyp", "en-sw.hyp"))  # 10 lines
    scores = json.loads((smk / "results/tiny/evaluate/naive/en-de.json").read_text())
    assert "tok:13a" in json.dumps(scores) and "nc:6|nw:0" in json.dumps(scores)  # sacreBLEU signatures kept
    summary = json.loads((smk / "results/tiny/evaluate/summary.json").read_text())
    assert "de-sw" in json.dumps(summary)  # the zero-shot direction feeds the off-target rate
    curve = (smk / "results/tiny/train/naive/curve.tsv").read_text().splitlines()
    assert curve[0].split("\t")[:2] == ["step", "loss"] and len(curve) > 2
    assert (smk / "results/tiny/train/naive/curve.png").read_bytes()[:4] == b"\x89PNG"  # the curve, drawn
    trained = json.loads((smk / "results/tiny/train/naive/run.json").read_text())  # what ran (lsnmt/record.py)
    assert trained["torch"] and trained["machine"]["cores"] and "commit" in trained
    evaluated = json.loads((smk / "results/tiny/evaluate/run.json").read_text())
    assert evaluated["train"]["naive"] == trained and evaluated["python"] == trained["python"]
    index = (smk / "reports" / "README.md").read_text()
    assert "not run" in index and "tables/lsl/table1.md" in index and "figures/lmsfd/figure1.png" in index
    assert index.startswith("# lsnmt: results of `tiny`\n\n## The answer: `tiny`")
    assert f"Trained and evaluated on {trained['machine']['host']} (" in index  # the banner reads the records
    _run(["snakemake", "--report", "report.html"], smk)  # Snakemake's HTML report with the figures attached
    assert (smk / "report.html").stat().st_size > 10_000
    _check_lsl_nas(smk)
    _check_xelm(smk / "results" / "tiny" / "xelm")


def _check_lsl_nas(repo: Path) -> None:
    """LSL: the search stage's selection is what lsl_nas trained and translated."""
    import torch

    arch = json.loads((repo / "results/tiny/search/lsl_search/architecture.json").read_text())
    model = torch.load(repo / "results/tiny/train/lsl_nas/model.pt", weights_only=False)
    assert model["config"]["method"]["cfg"]["src"] == arch["src"]
    assert model["config"]["method"]["cfg"]["tgt"] == arch["tgt"]
    assert (repo / "results/tiny/translate/lsl_nas/de-en.hyp").is_file()


def _check_xelm(out: Path) -> None:
    """The x-elm part of the tiny experiment: every table and figure file, HMR, ICL on the format fixtures."""
    table1 = [line.split("\t") for line in (out / "eval" / "table1.tsv").read_text().splitlines()]
    assert table1[0] == ["lang", "seed", "dense", "tfidf_top1", "tfidf_ens", "typology"]
    assert [r[0] for r in table1[1:]] == ["en", "de", "avg"] and all(float(x) > 1 for r in table1[1:] for x in r[1:])
    table2 = (out / "eval" / "table2.tsv").read_text().splitlines()
    assert table2[1].startswith("target\tsw\tsw\t") and table2[2].split("\t")[:3] == ["donor", "de", "sw"]
    for name in ("ppl", "table8", "figure3", "figure4", "forgetting"):
        assert len((out / "eval" / f"{name}.tsv").read_text().splitlines()) > 2, name
    hierarchy = json.loads((out / "cluster" / "typology" / "hierarchy.json").read_text())
    assert [r["k"] for r in hierarchy["rounds"]] == [2, 1]
    assert json.loads((out / "hmr" / "sw" / "data.json").read_text())["init"].endswith("typology-k2-e1/model.pt")
    icl = json.loads((out / "icl" / "summary.json").read_text())
    assert icl["status"] == {"xnli": "ok", "xstorycloze": "ok", "pawsx": "ok"}
    assert set(icl["table3"]) == {"xnli@0", "xnli@2", "xstorycloze@0", "xstorycloze@2", "pawsx@0", "pawsx@2"}
    assert "typology_en" in icl["table3"]["xnli@2"] and "tfidf_ens" in icl["table3"]["pawsx@0"]


@pytest.mark.slow
@pytest.mark.timeout(3600)  # the whole default run, twice: about 35 minutes on an idle 2-core machine
def test_default_pipeline_snakemake_and_dvc(tmp_path: Path) -> None:
    smk, dvc, again = _both_front_ends(tmp_path, None, "default")
    _check_same_outputs(smk, dvc, "default")
    assert "up to date" in again.lower() or "didn't change" in again.lower(), again
    a = smk / "data" / "default"
    report = json.loads((a / "prepared" / "report.json").read_text())
    assert len(report["train"]) == 16 and len(report["test"]) == 16
    assert all(v["lines"] == 1012 for v in report["test"].values())
    assert all(v["lines"] == 997 for v in report["valid"].values())
    sampling = json.loads((a / "sampled" / "sampling.json").read_text())["directions"]
    assert sampling["en-sw"]["m"] > sampling["en-sw"]["n"]  # the 387 Swahili pairs are up-sampled
    assert sampling["en-ru"]["m"] < sampling["en-ru"]["n"]  # the largest pair is down-sampled
