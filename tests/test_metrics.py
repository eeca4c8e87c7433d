"""The metrics files (lsnmt/eval/metrics.py) and what DVC makes of them: a bare ``dvc metrics show`` prints one row
per system (and test set, task, x-elm model or claim) and one column per metric, chrF, the held-out Tatoeba set and
the claim included, within 200 characters on the default; each of the README's ``dvc exp show`` views fits 200
characters too; ``dvc plots show`` draws the training curves without an error.

The DVC checks run the real ``dvc`` on a copy of the repository whose output folders hold fixture results written
by the stages' own writers (``tests/report/fixtures.py`` for the evaluation summary, ``lsnmt.eval.metrics``,
``lsnmt.train.curve``), not a pipeline run: a few seconds of DVC per command."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from lsnmt import paths as P
from lsnmt.eval.metrics import (
    claim_rows,
    mt_rows,
    task_rows,
    write_metrics,
    write_rows,
    xelm_icl_rows,
    xelm_ppl_rows,
)
from lsnmt.experiment.params import Params
from lsnmt.train import curve_plot
from lsnmt.train.curve import Curve
from tests.report.fixtures import write_evaluate

from .conftest import ROOT, copy_repo, venv_env

WIDTH = 200
"""Widest line ``dvc metrics show`` / ``dvc exp show --md`` may print (a wide terminal)."""

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


def _default_tasks() -> dict:
    """A task summary of the default experiment's shape: every task of params.yaml's ``tasks``, every system of
    ``task_methods`` (LMS+FD through both routes)."""
    params = Params.load(ROOT / "params.yaml")
    tasks, methods = params.jobs_of("default", "tasks"), params.jobs_of("default", "task_methods")
    entry = {"primary": "share", "params": {"train": 1_000_000, "inference": {"share": 900_000, "ls": 950_000}}}
    return {
        "tasks": {
            t: {
                "methods": {
                    m: {
                        **entry,
                        "routes": {
                            "share": {"avg": 41.25, "win_ratio": 60.0, "scores": {}},
                            **({"ls": {"avg": 42.5, "win_ratio": 80.0, "scores": {}}} if m == "lms_fd" else {}),
                        },
                    }
                    for m in methods
                }
            }
            for t in tasks
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


CLAIM = {
    "comparisons": [
        {"system": s, "baseline": b, "bleu": {"delta": d, "p": p}}
        for s, b, d, p in (("lms", "naive", 1.234, 0.2481), ("lsl", "naive_w24", 3.5, 0.0004))
    ],
    "claims": [
        {"system": "lms", "baseline": "naive", "status": "not shown"},
        {"system": "lsl", "baseline": "naive_w24", "status": "shown"},
        {"system": None, "baseline": None, "status": "not measured"},
    ],
}
"""A measured claim summary's shape (lsnmt/claim/run.py): its comparisons and verdicts."""


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
    assert (lms["bleu"], lms["en-xx"], lms["xx-en"]) == tuple(round(avg[s], 2) for s in ("all", "en-xx", "xx-en"))
    assert lms["chrf"] == round(summary["scores"][other]["chrf"]["averages"]["all"], 2) and lms["wr"] == 100.0
    assert set(lms) == {*summary["metrics"], "en-xx", "xx-en", "wr", "offtarget", "params", "params_eff"}
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


def test_claim_rows_are_one_per_measured_claim() -> None:
    rows = claim_rows(CLAIM)
    assert rows == {
        "lms-vs-naive.json": {"delta": 1.23, "p": 0.248, "shown": False},
        "lsl-vs-naive_w24.json": {"delta": 3.5, "p": 0.0, "shown": True},
    }
    assert claim_rows({"status": "not configured"}) == {}


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
        ("task_eval", task_rows(_default_tasks())),
        ("lm_eval", xelm_ppl_rows(XELM)),
        ("claim", claim_rows(CLAIM)),
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
        write_metrics(rows, repo / P.at(P.METRICS, exp, stage=stage))
    for i, method in enumerate(methods):
        curve = Curve(repo / "results" / exp / "train" / method / "curve.tsv", None)
        for step in (50, 100, 150):
            curve.append(
                step, 9.0 - step / 50 - i / 10, 8.5 - step / 50, 1e-3, 8.0 - step / 60 if step == 100 else None
            )
        curve_plot.draw(curve.path, curve.path.with_suffix(".png"), f"{exp}: {method}")  # as the train stage does
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@localhost"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True, capture_output=True)
    subprocess.run([*git, "commit", "-qm", "fixture"], cwd=repo, check=True, capture_output=True)
    return repo, methods


def _md_width(text: str) -> int:
    return max(map(len, text.splitlines()))


def _readme_lines(command: str) -> list[str]:
    """Each line of the README's code blocks that starts with ``command`` (its comment dropped)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```bash\n(.*?)^```", readme, re.M | re.S)
    lines = [line.split("   #", 1)[0].strip() for b in blocks for line in b.splitlines()]
    return [line for line in lines if line.startswith(command)]


METRIC_COLUMNS = {
    "bleu",
    "chrf",
    "en-xx",
    "xx-en",
    "wr",
    "offtarget",
    "params",
    "params_eff",
    "f1",
    "em",
    "ppl",
    "acc",
    "delta",
    "p",
    "shown",
    "status",
}
"""Every column ``dvc metrics show`` may print: metrics, never systems."""


@pytest.mark.timeout(300)
def test_dvc_metrics_show_prints_a_row_per_system_that_fits_200_columns(repo: tuple[Path, list[str]]) -> None:
    """The README's bare ``dvc metrics show``: every metrics file of the default read back as written, one row per
    system and test set (FLORES-200 and the held-out Tatoeba), NER / QA task, x-elm model or claim; one column per
    metric (chrF and the claim's difference, p and verdict among them); at most ``WIDTH`` characters."""
    path, methods = repo
    assert "dvc metrics show" in _readme_lines("dvc metrics show"), "README.md lost its bare `dvc metrics show`"
    shown = json.loads(_dvc(path, "metrics", "show", "--json"))[""]["data"]
    written = {str(f.relative_to(path)) for f in (path / "results/default/metrics").rglob("*.json")}
    assert set(shown) == written, sorted(set(shown) ^ written)
    for name, entry in shown.items():
        assert entry["data"] == json.loads((path / name).read_text()), name
    text = _dvc(path, "metrics", "show")
    lines = text.splitlines()
    header = lines[0].split()
    assert header[0] == "Path" and set(header[1:]) <= METRIC_COLUMNS, header
    assert {"bleu", "chrf", "wr", "f1", "ppl", "delta", "p", "shown"} <= set(header), header
    rows = {line.split()[0] for line in lines[1:] if line.strip()}
    evaluate = "results/default/metrics/evaluate"
    assert {f"{evaluate}/{t}/{m}.json" for t in ("test", "test.tatoeba") for m in methods} <= rows
    assert {"results/default/metrics/claim/lms-vs-naive.json", "results/default/metrics/lm_eval/seed.json"} <= rows
    assert _md_width(text) <= WIDTH, f"`dvc metrics show` is {_md_width(text)} characters wide:\n{text}"


def _exp_show(path: Path, *args: str) -> dict[str, str]:
    """The workspace row of ``dvc exp show --csv ARGS``: column -> value."""
    import csv
    import io

    table = csv.DictReader(io.StringIO(_dvc(path, "exp", "show", "--no-pager", "--csv", *args)))
    return next(r for r in table if r["rev"] == "workspace")


@pytest.mark.timeout(300)
def test_dvc_exp_show_reads_every_metrics_file(repo: tuple[Path, list[str]]) -> None:
    """``dvc exp show`` has a column per file and key (``<file>:bleu``: DVC names a key that several files share by
    its file) holding the value written, and the selection (experiment, methods) under its own name."""
    path, methods = repo
    row = _exp_show(path)
    assert row["experiment"] == "default" and row["methods"] == str(methods)
    for f in (path / "results/default/metrics").rglob("*.json"):
        for key, value in json.loads(f.read_text()).items():
            assert row[f"{f.relative_to(path)}:{key}"] == str(value), (f, key)


@pytest.mark.timeout(300)
def test_each_readme_exp_show_view_fits_200_columns(repo: tuple[Path, list[str]]) -> None:
    """Each ``dvc exp show --md`` line of the README, run on the default: at most ``WIDTH`` characters, the
    experiment's name in it."""
    path, _ = repo
    views = _readme_lines("dvc exp show")
    assert views, "README.md lost its `dvc exp show` views"
    for view in views:
        args = shlex.split(view)[3:]
        assert "--md" in args, f"a README view that is not --md: {view}"
        text = _dvc(path, "exp", "show", "--no-pager", *args)
        header = {c.strip() for c in text.splitlines()[0].split("|")}
        assert {"Experiment", "experiment"} <= header, (view, header)
        assert _md_width(text) <= WIDTH, f"`{view}` is {_md_width(text)} wide:\n{text}"


@pytest.mark.timeout(300)
def test_dvc_plots_show_draws_every_training_curve(repo: tuple[Path, list[str]]) -> None:
    path, methods = repo
    shown = json.loads(_dvc(path, "plots", "show", "--json", "--split"))
    assert not shown.get("errors"), shown.get("errors")
    curves = {k for k in shown["data"] if k.endswith("curve.tsv")}
    assert curves == {f"results/default/train/{m}/curve.tsv" for m in methods}
    images = {k for k in shown["data"] if k.endswith("curve.png")}  # drawn offline: no chart library needed
    assert images == {f"results/default/train/{m}/curve.png" for m in methods}


def test_a_stage_without_numbers_says_why_in_one_row(tmp_path: Path) -> None:
    """lm_icl on the default has no data (its datasets are not downloaded): its metrics folder holds one status file,
    one row of ``dvc metrics show`` that says so (DVC warned "is empty" of an empty folder in a fresh-clone run)."""
    write_metrics({}, tmp_path / "lm_icl")
    assert [p.name for p in (tmp_path / "lm_icl").iterdir()] == ["status.json"]
    assert json.loads((tmp_path / "lm_icl/status.json").read_text(encoding="utf-8")) == {"status": "not run"}
    write_metrics({}, tmp_path / "claim", "not configured")
    assert json.loads((tmp_path / "claim/status.json").read_text(encoding="utf-8")) == {"status": "not configured"}
