"""The claim stage on a tiny claim (seconds): every job trains and decodes, the outputs have their structure, the
verdicts are lsnmt.eval.significance's, and an experiment without a claim section says so."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from lsnmt.claim import stats
from lsnmt.claim.stage import run_claim
from lsnmt.config import ClaimConfig, Params
from lsnmt.eval import significance
from lsnmt.typed import build

ROOT = Path(__file__).resolve().parents[2]
TINY: dict[str, Any] = {
    "languages": ["en", "de", "fr"], "concepts": 6, "reverse": ["de"], "min_len": 2, "max_len": 3,
    "sentences": {"train": 40, "valid": 4, "test": 8},
    "model": {"embed_dim": 8, "ffn_dim": 16, "heads": 2, "encoder_layers": 2, "decoder_layers": 1, "dropout": 0.0,
              "normalize_before": True},
    "train": {"max_tokens": 200, "max_steps": 6, "lr": 0.005, "warmup_steps": 3, "batching": "mixed",
              "log_every": 3, "validate_every": 6, "save_every": 6, "keep_last": 1, "final_checkpoint": "last"},
    "methods": {"lms": {"kind": "lms", "rank": 2}, "fd": {"kind": "fd", "route": "share"},
                "lsl": {"kind": "lsl", "src": [1], "tgt": [2]}},
    "seeds": [1, 2], "bootstrap_samples": 40}


@pytest.fixture(scope="module")
def measured(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], Path]:
    exp = dataclasses.replace(Params.load(ROOT / "params.yaml").get("default"),
                              claim=build(ClaimConfig, TINY, "claim"))
    root = tmp_path_factory.mktemp("claim")
    return run_claim(exp, root / "out", root / "work"), root / "out"


def test_every_system_is_measured_with_its_parameters(measured: tuple[dict[str, Any], Path]) -> None:
    summary, out = measured
    assert summary["status"] == "measured"
    assert summary["order"] == list(summary["systems"]) == ["naive", "lms", "fd", "fd_ls", "lsl"]  # FD: 2 routes
    assert summary["directions"] == ["en-de", "en-fr", "de-en", "fr-en"]
    assert summary["items"] == 2 * 4 * 8
    naive = summary["systems"]["naive"]["params"]
    assert naive["shared"] == naive["total"]
    for name, s in summary["systems"].items():
        assert s["params"]["total"] >= s["params"]["shared"] > 0
        if name != "naive":
            assert s["params"]["total"] > naive["total"]  # LS parameters on top of the same base model
        assert set(s["per_seed"]) == {"1", "2"} and set(s["per_direction"]) == set(summary["directions"])
        assert s["bleu_ci"][0] <= s["bleu"] <= s["bleu_ci"][1] and 0 <= s["exact"] <= 100
    assert summary["systems"]["fd"]["params"]["shared"] == naive["total"]  # FD-Share: the shared FFN, no expert
    assert summary["systems"]["fd"]["route"] == "share" and summary["systems"]["fd_ls"]["route"] == "ls"
    assert summary["timing"]["cpu_seconds"] > 0 and set(summary["timing"]["jobs"]) == {
        f"{m}-s{s}" for m in ("naive", "lms", "fd", "lsl") for s in (1, 2)}


def test_comparisons_orderings_and_files(measured: tuple[dict[str, Any], Path]) -> None:
    summary, out = measured
    pairs = [(c["system"], c["baseline"]) for c in summary["comparisons"]]
    assert pairs == [("lms", "naive"), ("fd", "naive"), ("fd_ls", "naive"), ("lsl", "naive"), ("lms", "fd")]
    for c in summary["comparisons"]:
        assert set(c["per_seed"]) == {"1", "2"} and len(c["bleu"]["ci"]) == 2
    claims = {o["claim"]: o for o in summary["orderings"]}
    assert list(claims) == ["LMS > naive", "LSL > naive", "naive < FD-Share < LMS"]
    assert all(o["status"] in ("shown", "not shown") and o["because"] for o in claims.values())
    assert json.loads((out / "summary.json").read_text()) == json.loads(json.dumps(summary))
    md = (out / "summary.md").read_text()
    assert "Ours only" in md and "| lsl | lsl: src [1], tgt [2] |" in md and "LMS > naive" in md
    assert (out / "figure.png").stat().st_size > 0 and (out / "figure.pdf").is_file()


def test_an_ordering_needs_its_methods(tmp_path: Path) -> None:
    cfg = build(ClaimConfig, {**TINY, "methods": {"lms": {"kind": "lms", "rank": 2}}, "seeds": [1]}, "claim")
    exp = dataclasses.replace(Params.load(ROOT / "params.yaml").get("default"), claim=cfg)
    summary = run_claim(exp, tmp_path / "out", tmp_path / "work")
    status = {o["claim"]: o["status"] for o in summary["orderings"]}
    assert status["LSL > naive"] == status["naive < FD-Share < LMS"] == "not measured"
    assert status["LMS > naive"] in ("shown", "not shown")


def test_without_a_claim_section_the_stage_says_so(tmp_path: Path) -> None:
    exp = Params.load(ROOT / "params.yaml").get("iwslt14")
    summary = run_claim(exp, tmp_path / "out", tmp_path / "work")
    assert summary["status"] == "not configured" and "no claim section" in summary["reason"]
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["status"] == "not configured"
    assert "Not measured" in (tmp_path / "out" / "summary.md").read_text()
    assert not (tmp_path / "out" / "figure.png").exists() and not (tmp_path / "work").exists()


def test_the_verdict_is_the_paired_bootstrap_of_lsnmt_eval_significance(monkeypatch: pytest.MonkeyPatch) -> None:
    refs = {"en-de": ["1 2 3 4 5", "4 5 6 7", "6 7 8 9 10", "9 10 11 12"] * 5,
            "de-en": ["11 12 13 14", "13 14 15 16 17", "16 17 18 19", "18 19 20 21 22"] * 5}  # BLEU needs 4-grams
    good = {s: {d: list(r) for d, r in refs.items()} for s in (1, 2)}
    bad = {s: {d: [x.rsplit(" ", 1)[0] if i % 2 else x for i, x in enumerate(r)] for d, r in refs.items()}
           for s in (1, 2)}
    calls = []
    real = significance.paired_bootstrap
    monkeypatch.setattr(significance, "paired_bootstrap", lambda *a, **k: calls.append(a) or real(*a, **k))
    c = stats.compare(good, bad, refs, [1, 2], samples=200, seed=7, alpha=0.05, names=("m", "naive"))
    assert len(calls) == 1 and len(calls[0][1]) == 2 * 40  # one test, on the corpus pooled over seeds
    pooled = stats.pool(good, [1, 2], list(refs))
    direct = real(stats.metric(), pooled, stats.pool(bad, [1, 2], list(refs)), stats.pool({1: refs, 2: refs}, [1, 2],
                                                                                            list(refs)),
                  samples=200, seed=7, alpha=0.05)
    assert {k: c["bleu"][k] for k in direct} == direct
    assert c["bleu"]["significant"] and c["bleu"]["ci"][0] > 0 and c["seeds_better"] == 2
    assert c["exact"]["delta"] == pytest.approx(50.0) and c["exact"]["significant"]
    ok, text = stats.better(c)
    assert ok and "better on 2 of 2 seeds" in text
    worse = stats.compare(bad, good, refs, [1, 2], samples=200, seed=7, alpha=0.05, names=("m", "naive"))
    assert stats.ordering("m > naive", [worse], "")["status"] == "not shown"
    assert stats.ordering("x", [None], "no x")["status"] == "not measured"


def test_degenerate_outputs_get_no_verdict() -> None:
    refs = {"en-de": ["1 2 3 4 5"] * 10}
    empty = {1: {"en-de": [""] * 10}}
    c = stats.compare(empty, empty, refs, [1], samples=50, seed=1, alpha=0.05, names=("m", "naive"))
    assert c["bleu"]["significant"] is None and "length ratio" in c["bleu"]["degenerate"]
    assert stats.ordering("m > naive", [c], "")["status"] == "not shown"
