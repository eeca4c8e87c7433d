"""The headline metrics (lsnmt/eval/metrics.py) and what DVC makes of them: ``dvc metrics show`` prints one row per
system that fits a terminal, ``dvc exp show`` lists the experiment's params beside them, ``dvc plots show`` draws
the training curves without an error.

The DVC checks run the real ``dvc`` on a copy of the repository whose output folders hold fixture results written
by the stages' own writers (``tests/report/fixtures.py`` for the evaluation summary, ``lsnmt.eval.metrics``,
``lsnmt.train.curve``), not a pipeline run: a few seconds of DVC per command."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from lsnmt.config import Params
from lsnmt.eval.metrics import metrics_dir, mt_rows, task_rows, write_rows, xelm_icl_rows, xelm_ppl_rows
from lsnmt.train.curve import Curve
from tests.report.fixtures import write_evaluate

from .conftest import ROOT, copy_repo, venv_env

WIDTH = 200
"""Widest line ``dvc metrics show`` may print (a wide terminal)."""

TASKS = {
    "tasks": {
        "wikiann": {
            "kind": "ner",
            "languages": ["de", "fr"],
            "methods": {
                "naive": {
                    "primary": "ls",
                    "params": {"train": 100, "inference": {"ls": 100}},
                    "routes": {"ls": {"avg": 20.004, "scores": {"de": 20.0, "fr": 20.008}}},
                },
                "lms_fd": {
                    "primary": "share",
                    "params": {"train": 150, "inference": {"share": 100, "ls": 120}},
                    "routes": {
                        "share": {"avg": 21.5, "win_ratio": 50.0, "scores": {}},
                        "ls": {"avg": 22.25, "win_ratio": 100.0, "scores": {}},
                    },
                },
            },
        },
        "tydiqa": {
            "kind": "qa",
            "languages": ["en"],
            "methods": {
                "naive": {
                    "primary": "ls",
                    "params": {"train": 90, "inference": {"ls": 90}},
                    "routes": {"ls": {"avg": 30.0, "exact_match": {"en": 12.345}, "scores": {}}},
                }
            },
        },
    }
}
XELM = {
    "table1_avg": {
        "seed": 762.2864,
        "dense": 654.0031,
        "tfidf_top1": 491.559,
        "tfidf_ens": 574.757,
        "typology": 359.1244,
    },
    "main_k": 4,
}


def _summary(results: Path, degenerate: dict | None = None) -> tuple[dict, list[str]]:
    params = Params.load(ROOT / "params.yaml")
    methods = list(params.methods_of("default"))
    summary = write_evaluate(
        results,
        params.get("default"),
        methods,
        lambda m, s, t: 10.0 + methods.index(m) + len(s + t) / 7,
        degenerate=degenerate,
        cost={m: {"train_params": 1_950_208 + i, "inference_params_max": 1_950_000} for i, m in enumerate(methods)},
    )
    summary["offtarget"] = {"methods": {m: {"overall": {"rate": 12.3456}} for m in methods}}
    summary["test_sets"] = {"test.tatoeba": {**summary, "test_set": "test.tatoeba"}}
    return summary, methods


def test_mt_rows_are_the_summarys_averages_per_system_and_test_set(tmp_path: Path) -> None:
    summary, methods = _summary(tmp_path)
    rows = mt_rows(summary)
    assert set(rows) == {f"{t}/{m}.json" for t in ("test", "test.tatoeba") for m in methods}
    base, other = methods[0], methods[1]
    assert summary["baseline"] == base
    lms = rows[f"test/{other}.json"]
    avg = summary["scores"][other]["bleu"]["averages"]
    assert summary["metrics"][:2] == ["bleu", "chrf"]
    assert lms["bleu"] == {
        "all": round(avg["all"], 2),
        "en-xx": round(avg["en-xx"], 2),
        "xx-en": round(avg["xx-en"], 2),
    }
    assert lms["chrf"] == round(summary["scores"][other]["chrf"]["averages"]["all"], 2) and lms["wr"] == 100.0
    assert set(lms) == {*summary["metrics"], "wr", "offtarget", "params", "params_eff"}
    assert lms["offtarget"] == 12.35 and lms["params"] == 1_950_209 and lms["params_eff"] == 1_950_000
    assert "wr" not in rows[f"test/{base}.json"]  # the baseline has none against itself


def test_a_withheld_win_ratio_stays_out(tmp_path: Path) -> None:
    """Between degenerate outputs the summary withholds the win ratio (lsnmt/eval/degenerate.py): no number."""
    params = Params.load(ROOT / "params.yaml")
    other = list(params.methods_of("default"))[1]
    summary, _ = _summary(tmp_path, degenerate={"pairs": {other: "both below 1.0 BLEU"}})
    assert "wr" not in mt_rows(summary)[f"test/{other}.json"]


def test_task_and_xelm_rows() -> None:
    rows = task_rows(TASKS)
    assert rows["wikiann/naive.json"] == {"f1": 20.0, "params": 100, "params_eff": 100}
    assert rows["wikiann/lms_fd.json"] == {"f1": 21.5, "wr": 50.0, "params": 150, "params_eff": 100}
    assert rows["wikiann/lms_fd_ls.json"] == {"f1": 22.25, "wr": 100.0, "params": 150, "params_eff": 120}
    assert rows["tydiqa/naive.json"]["em"] == 12.35
    assert xelm_ppl_rows(XELM)["typology.json"] == {"ppl": 359.12}
    icl = {"table3": {"xnli@0": {"seed": {"accuracy": 40.123, "win_rate": 0.0}, "dense": {"accuracy": 41.0}}}}
    assert xelm_icl_rows(icl) == {"xnli@0/seed.json": {"acc": 40.12}, "xnli@0/dense.json": {"acc": 41.0}}
    assert xelm_icl_rows({"status": {"xnli": "not run"}, "table3": {}}) == {}


def test_write_rows_replaces_the_folder_and_refuses_paths_outside(tmp_path: Path) -> None:
    out = tmp_path / "m"
    write_rows(out, {"a/x.json": {"v": 1}, "y.json": {"v": 2}})
    write_rows(out, {"y.json": {"v": 3}})
    assert sorted(p.name for p in out.rglob("*.json")) == ["y.json"]
    assert json.loads((out / "y.json").read_text()) == {"v": 3}
    with pytest.raises(ValueError, match="outside"):
        write_rows(out, {"../z.json": {}})


def _dvc(repo: Path, *args: str) -> str:
    out = subprocess.run(["dvc", *args], cwd=repo, env=venv_env(), capture_output=True, text=True)
    assert out.returncode == 0, f"dvc {' '.join(args)}:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out.stdout + out.stderr


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A copy of the repository with the default experiment's metrics folders and training curves written."""
    repo = copy_repo(tmp_path_factory.mktemp("metrics"))
    summary, methods = _summary(repo / "results")
    exp = "default"
    for stage, rows in (
        ("evaluate", mt_rows(summary)),
        ("task_eval", task_rows(TASKS)),
        ("lm_eval", xelm_ppl_rows(XELM)),
        (
            "lm_icl",
            xelm_icl_rows(
                {
                    "table3": {
                        f"{t}@{k}": {s: {"accuracy": 50.0 + k} for s in ("seed", "dense", "tfidf_ens")}
                        for t in ("xnli", "xstorycloze", "pawsx")
                        for k in (0, 8)
                    }
                }
            ),
        ),
    ):
        write_rows(repo / metrics_dir(exp, stage), rows)
    for i, method in enumerate(methods):
        curve = Curve(repo / "results" / exp / "train" / method / "curve.tsv", None)
        for step in (50, 100, 150):
            curve.append(
                step, 9.0 - step / 50 - i / 10, 8.5 - step / 50, 1e-3, 8.0 - step / 60 if step == 100 else None
            )
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@localhost"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True, capture_output=True)
    subprocess.run([*git, "commit", "-qm", "fixture"], cwd=repo, check=True, capture_output=True)
    return repo, methods


@pytest.mark.timeout(300)
def test_dvc_metrics_show_prints_a_row_per_system_that_fits_a_terminal(repo: tuple[Path, list[str]]) -> None:
    path, methods = repo
    text = _dvc(path, "metrics", "show")
    assert "failed to load" not in text, text[:2000]
    lines = text.splitlines()
    header = lines[0].split()
    assert header[0] == "Path" and {
        "bleu.all",
        "bleu.en-xx",
        "bleu.xx-en",
        "chrf",
        "wr",
        "offtarget",
        "params",
        "params_eff",
        "f1",
        "em",
        "ppl",
        "acc",
    } <= set(header)
    rows = {line.split()[0]: line for line in lines[1:] if line.strip()}
    for test_set in ("test", "test.tatoeba"):
        assert {f"results/default/metrics/evaluate/{test_set}/{m}.json" for m in methods} <= set(rows)
    assert "results/default/metrics/task_eval/wikiann/lms_fd_ls.json" in rows
    assert max(map(len, lines)) <= WIDTH, f"`dvc metrics show` is {max(map(len, lines))} characters wide"
    shown = json.loads(_dvc(path, "metrics", "show", "--json"))
    data = shown[""]["data"]
    naive = data["results/default/metrics/evaluate/test/naive.json"]["data"]
    written = json.loads((path / "results/default/metrics/evaluate/test/naive.json").read_text())
    assert naive == written


def _exp_show(path: Path, *args: str) -> dict[str, str]:
    """The workspace row of ``dvc exp show --csv ARGS``: column -> value."""
    import csv
    import io

    table = csv.DictReader(io.StringIO(_dvc(path, "exp", "show", "--no-pager", "--csv", *args)))
    return next(r for r in table if r["rev"] == "workspace")


@pytest.mark.timeout(300)
def test_dvc_exp_show_lists_the_experiment_params_and_metrics(repo: tuple[Path, list[str]]) -> None:
    path, methods = repo
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    drop = re.search(r"^dvc exp show --drop '([^']+)'", readme, re.M)
    assert drop, "README.md lost its `dvc exp show --drop '...'` command"
    for args in ((), ("--drop", drop.group(1))):
        row = _exp_show(path, *args)
        assert row["experiment"] == "default" and row["methods"] == str(methods), args
        bleu = {c: v for c, v in row.items() if c.endswith(":bleu.all")}
        written = json.loads((path / f"results/default/metrics/evaluate/test/{methods[1]}.json").read_text())
        assert bleu[f"results/default/metrics/evaluate/test/{methods[1]}.json:bleu.all"] == str(written["bleu"]["all"])
        assert any(c.endswith(":ppl") for c in row) and any(c.endswith(":f1") for c in row), args
    # the README's filter leaves the selection and the metrics: no other experiment's settings, no dependency
    assert not [c for c in row if c.startswith(("experiments.", "lsnmt/", "data/"))], list(row)[:30]
    assert len(row) < 120, f"{len(row)} columns after the README's filter"
    keep = re.search(r"^dvc exp show --drop '\.\*' --keep '([^']+)'", readme, re.M)
    assert keep, "README.md lost its `dvc exp show --drop '.*' --keep '...'` command"
    few = _exp_show(path, "--drop", ".*", "--keep", keep.group(1) + "|^rev$")  # rev: to find the workspace row
    assert {c for c in few if c.endswith(":bleu.all")} == {
        f"results/default/metrics/evaluate/test/{m}.json:bleu.all" for m in methods
    }
    assert few["experiment"] == "default"


@pytest.mark.timeout(300)
def test_dvc_plots_show_draws_every_training_curve(repo: tuple[Path, list[str]]) -> None:
    path, methods = repo
    shown = json.loads(_dvc(path, "plots", "show", "--json", "--split"))
    assert not shown.get("errors"), shown.get("errors")
    curves = {k for k in shown["data"] if k.endswith("curve.tsv")}
    assert curves == {f"results/default/train/{m}/curve.tsv" for m in methods}
