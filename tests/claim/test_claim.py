"""The claim stage on a tiny claim (seconds): every job trains and decodes, the outputs have their structure, each
claim is tested against its baseline, a second run resumes from the kept results, and an experiment without a
claim section says so."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lsnmt import methods
from lsnmt.claim import claims, measure, run, stats, task
from lsnmt.claim.config import ClaimConfig
from lsnmt.claim.run import run_claim
from lsnmt.data.corpus import Vocab
from lsnmt.eval import significance
from lsnmt.experiment.params import Experiment, Params
from lsnmt.typed import build

ROOT = Path(__file__).resolve().parents[2]
TINY: dict[str, Any] = {
    "languages": ["en", "de", "fr"], "concepts": 6, "reverse": ["de"], "scramble": ["fr"], "min_len": 2,
    "max_len": 3, "sentences": {"train": 40, "valid": 4, "test": 8},
    "model": {"embed_dim": 8, "ffn_dim": 16, "heads": 2, "encoder_layers": 2, "decoder_layers": 1, "dropout": 0.0,
              "normalize_before": True},
    "train": {"max_tokens": 200, "max_steps": 6, "lr": 0.005, "warmup_steps": 3, "batching": "mixed",
              "log_every": 3, "validate_every": 3, "save_every": 6, "keep_last": 1, "final_checkpoint": "last"},
    "methods": {"lms": {"kind": "lms", "rank": 2}, "fd": {"kind": "fd", "route": "share"},
                "lsl": {"kind": "lsl", "src": [1], "tgt": [2]}},
    "dense": {"wide": {"embed_dim": 12, "ffn_dim": 16}},
    "dense_tolerance": 0.2, "seeds": [1, 2], "bootstrap_samples": 40}


def _exp(claim: dict[str, Any]) -> Experiment:
    default = Params.load(ROOT / "params.yaml").get("default")
    return dataclasses.replace(default, claim=build(ClaimConfig, claim, "claim"))


def _run(exp: Experiment, out: Path, work: Path) -> dict[str, Any]:
    """What the stage runs: the experiment's ``claim`` section handed down (stages/claim.py)."""
    return run_claim(exp.claim, exp.name, out, work)


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    root = tmp_path_factory.mktemp("claim")
    return _run(_exp(TINY), root / "out", root / "work"), root


def test_every_system_is_measured_with_its_parameters(measured: tuple[dict[str, Any], Path]) -> None:
    summary, _ = measured
    assert summary["status"] == "measured"
    assert summary["order"] == list(summary["systems"]) == ["naive", "wide", "lms", "fd", "fd_ls", "lsl"]
    assert summary["directions"] == ["en-de", "en-fr", "de-en", "fr-en"]
    assert summary["items"] == 2 * 4 * 8
    systems = summary["systems"]
    naive = systems["naive"]["params"]
    assert naive["shared"] == naive["total"] == naive["inference"]
    for name, s in systems.items():
        assert s["params"]["total"] >= s["params"]["inference"] >= s["params"]["shared"] > 0
        if name != "naive":
            assert s["params"]["total"] > naive["total"]  # LS parameters on top of the same base model, or wider
        assert set(s["per_seed"]) == {"1", "2"} and set(s["per_direction"]) == set(summary["directions"])
        assert s["bleu_ci"][0] <= s["bleu"] <= s["bleu_ci"][1] and 0 <= s["exact"] <= 100
    assert systems["wide"]["dense"] and systems["wide"]["settings"] == {"embed_dim": 12, "ffn_dim": 16}
    assert systems["lms"]["params"]["shared"] == naive["total"]  # LMS: the base model is shared
    assert systems["fd"]["params"]["inference"] == naive["total"]  # FD-Share: the shared FFN, no expert
    assert systems["lsl"]["params"]["inference"] == naive["total"]  # LSL: one language's layer per direction
    assert systems["lsl"]["params"]["shared"] < naive["total"]
    assert systems["fd"]["route"] == "share" and systems["fd_ls"]["route"] == "ls"
    jobs = {f"{m}-s{s}" for m in ("naive", "wide", "lms", "fd", "lsl") for s in (1, 2)}
    assert summary["timing"]["cpu_seconds"] > 0 and set(summary["timing"]["jobs"]) == set(summary["curves"]) == jobs
    assert [p["step"] for p in summary["curves"]["naive-s1"]] == [3, 6]


def test_claims_comparisons_and_files(measured: tuple[dict[str, Any], Path]) -> None:
    summary, root = measured
    pairs = [(c["system"], c["baseline"]) for c in summary["comparisons"]]
    assert pairs == [("wide", "naive"), ("lms", "naive"), ("fd", "naive"), ("fd_ls", "naive"), ("lsl", "naive"),
                     ("lsl", "wide")]  # the wide model is within 20% of LSL's total, not of LMS's
    for c in summary["comparisons"]:
        assert set(c["per_seed"]) == {"1", "2"} and len(c["bleu"]["ci"]) == 2
        assert c["interval"] == stats.INTERVAL and c["bleu"]["df"] == 1  # two seeds
    verdicts = {v["claim"]: v for v in summary["claims"]}
    assert len(verdicts) == 5 and all(v["source"] for v in verdicts.values())
    assert verdicts["LSL > a naive of LSL's total size"]["baseline"] == "wide"
    assert verdicts["LMS > a naive of LMS's total size"]["status"] == "not measured"
    assert verdicts["LMS > a naive of LMS's total size"]["because"].endswith("beyond ±20%")
    for text in ("LMS > naive at equal shared capacity", "FD-Share > naive at naive's size",
                 "LSL > naive at equal inference cost"):
        assert verdicts[text]["baseline"] == "naive" and verdicts[text]["status"] in ("shown", "not shown")
    out = root / "out"
    assert json.loads((out / "summary.json").read_text()) == json.loads(json.dumps(summary))
    md = (out / "summary.md").read_text()
    assert "Ours only" in md and "| lsl | lsl: src [1], tgt [2] |" in md and "LSL Sec. 4.3" in md
    assert "scramble: fr" in md and "6 updates of 200 tokens" in md and "Naive's validation loss" in md
    assert (out / "figure.png").stat().st_size > 0 and (out / "figure.pdf").is_file()


def test_a_second_run_resumes_from_the_kept_results(measured: tuple[dict[str, Any], Path],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    summary, root = measured

    def fail(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a kept job trained again")

    monkeypatch.setattr(measure, "train_job", fail)
    again = _run(_exp(TINY), root / "again", root / "work")
    keys = ("systems", "comparisons", "claims", "curves")
    assert {k: again[k] for k in keys} == json.loads(json.dumps({k: summary[k] for k in keys}))


def test_a_changed_job_retrains_only_itself_and_another_task_starts_afresh(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    claim = {**TINY, "methods": {"lms": {"kind": "lms", "rank": 2}}, "dense": {}, "seeds": [1]}
    _run(_exp(claim), tmp_path / "out", tmp_path / "work")
    trained: list[str] = []
    real = measure.train_job
    monkeypatch.setattr(measure, "train_job", lambda exp, method, *a: trained.append(method) or real(exp, method, *a))
    _run(_exp({**claim, "methods": {"lms": {"kind": "lms", "rank": 3}}}), tmp_path / "out", tmp_path / "work")
    assert trained == ["lms"]
    (tmp_path / "work" / "naive-s1" / "stray").write_text("x")
    _run(_exp({**claim, "concepts": 7}), tmp_path / "out", tmp_path / "work")
    assert trained == ["lms", "naive", "lms"] and not (tmp_path / "work" / "naive-s1" / "stray").exists()


def test_each_kind_trains_with_its_batching(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As stages/train.py (both through lsnmt.train.method.train_method): Switch trains on mixed batches whatever
    the claim's batching (its kind's own batches, lsnmt.methods.train_settings)."""
    from lsnmt.train import method as train_method_module

    seen: dict[str, str] = {}

    def record(exp: Experiment, *args: Any, method: dict[str, Any] | None = None, **kwargs: Any) -> None:
        seen[method["kind"] if method else "naive"] = exp.train.batching

    monkeypatch.setattr(train_method_module, "train", record)
    claim = build(ClaimConfig, {**TINY, "train": {**TINY["train"], "batching": "direction"}, "dense": {},
                                "methods": {"switch": {"kind": "switch", "experts": 2}}}, "claim")
    exp = dataclasses.replace(_exp(TINY), method_cfg={"switch": claim.methods["switch"]}, model=claim.model,
                              train=claim.train)
    for method in ("naive", "switch"):
        measure.train_job(exp, method, tmp_path, tmp_path / method)
    assert seen == {"naive": "direction", "switch": "mixed"}


def test_without_a_claim_section_the_stage_says_so(tmp_path: Path) -> None:
    exp = Params.load(ROOT / "params.yaml").get("iwslt14")
    summary = _run(exp, tmp_path / "out", tmp_path / "work")
    assert summary["status"] == "not configured" and "no claim section" in summary["reason"]
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["status"] == "not configured"
    assert "Not measured" in (tmp_path / "out" / "summary.md").read_text()
    assert not (tmp_path / "out" / "figure.png").exists() and not (tmp_path / "work").exists()


def test_a_comparison_tests_both_systems_on_the_same_resamples() -> None:
    """With one seed the interval is sentence noise alone, from sacreBLEU's paired bootstrap over sentence clusters:
    on one direction, the spread of lsnmt.eval.significance's resampled differences (the same draws for both)."""
    refs = {"en-de": ["1 2 3 4 5", "4 5 6 7", "6 7 8 9 10", "9 10 11 12"] * 5}  # BLEU needs 4-grams
    good = {1: {"en-de": list(refs["en-de"])}}
    bad = {1: {"en-de": [x.rsplit(" ", 1)[0] if i % 2 else x for i, x in enumerate(refs["en-de"])]}}
    c = stats.compare(good, bad, refs, [1], samples=200, seed=7, alpha=0.05, names=("m", "naive"))
    m = stats.metric()
    w = stats.resample_weights(refs, [1], 200, 7)
    a = significance.resample_scores(m, significance.sentence_stats(m, good[1]["en-de"], refs["en-de"]), w)
    b = significance.resample_scores(m, significance.sentence_stats(m, bad[1]["en-de"], refs["en-de"]), w)
    t = c["bleu"]
    assert t["se_sentences"] == pytest.approx(np.std(a - b, ddof=1)) and t["se_seeds"] == 0 and t["df"] == 19
    assert t["significant"] and t["ci"][0] > 0 and t["p"] < 0.05
    assert c["exact"]["delta"] == pytest.approx(50.0) and c["exact"]["significant"]
    ok, text = stats.better(c)
    assert ok and "better on 1 of 1 seeds" in text
    worse = stats.compare(bad, good, refs, [1], samples=200, seed=7, alpha=0.05, names=("m", "naive"))
    assert not stats.better(worse)[0]


def test_degenerate_outputs_get_no_verdict() -> None:
    refs = {"en-de": ["1 2 3 4 5"] * 10}
    empty = {1: {"en-de": [""] * 10}}
    c = stats.compare(empty, empty, refs, [1], samples=50, seed=1, alpha=0.05, names=("m", "naive"))
    assert c["bleu"]["significant"] is None and "length ratio" in c["bleu"]["degenerate"]
    assert not stats.better(c)[0] and "no verdict" in stats.better(c)[1]


def test_the_default_claim_meets_every_parameter_condition(tmp_path: Path) -> None:
    """params.yaml's claim: LMS's shared and FD-Share's and LSL's per-direction parameters equal naive's total, and
    a dense model lies within 2% of LMS's and of LSL's total (counted on the models the stage builds)."""
    cfg = Params.load(ROOT / "params.yaml").get("default").claim
    assert cfg is not None
    vocab = Vocab.load(task.write_data(cfg, tmp_path / "bin"))
    systems: dict[str, dict[str, Any]] = {}
    for job in task.jobs(dataclasses.replace(cfg, seeds=(1,))):
        exp = task.spec("default", cfg, job)
        counts = measure.param_counts(exp, job.method, vocab)
        for system in methods.systems(exp.method_cfg, job.method):
            name = job.system if job.system in cfg.dense else system.name
            systems[name] = {**run.system_record(cfg, exp, job, system), "params": counts[system.name]}
    for claim in claims.CLAIMS:
        system = claims.find(systems, claim.kind, claim.route)
        assert system is not None, claim.text
        base, text = claims.baseline(claim, systems, system, tolerance=0.02)
        assert base is not None, text
