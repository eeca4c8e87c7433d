"""The report's "ours only" claim table and figure render from a claim summary.json (the claim stage's format,
``lsnmt/claim/run.py``); an experiment whose claim was not measured gets no item."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from lsnmt.experiment.params import Params
from lsnmt.io import write_json
from lsnmt.report import specs
from lsnmt.report.runs import Results
from lsnmt.report.specs.claim import claim_tables

ROOT = Path(__file__).resolve().parents[2]


def _system(kind: str | None, route: str | None, settings: dict, params: tuple[int, int, int], bleu: float,
            dense: bool = False) -> dict:
    total, shared, inference = params
    return {"method": kind or "naive", "kind": kind, "route": route, "settings": settings, "dense": dense,
            "params": {"total": total, "shared": shared, "inference": inference}, "bleu": bleu,
            "bleu_ci": [bleu - 2, bleu + 2], "exact": bleu - 5, "exact_ci": [bleu - 8, bleu - 2], "length_ratio": 1.0,
            "per_seed": {"1": {"bleu": bleu - 1, "exact": bleu - 6}, "2": {"bleu": bleu + 1, "exact": bleu - 4}},
            "per_direction": {"en-de": {"bleu": bleu, "exact": bleu - 5}}}


def _vs(system: str, baseline: str, delta: float, p: float | None) -> dict:
    test = {"score": 60 + delta, "baseline": 60.0, "delta": delta, "p": p, "ci": [delta - 1.5, delta + 1.5]}
    if p is None:
        test |= {"significant": None, "degenerate": "both below 1.0 BLEU"}
    else:
        test |= {"significant": p < 0.05, "samples": 1000, "seed": 12345, "alpha": 0.05}
    seeds = {"1": {"bleu": delta, "exact": delta}, "2": {"bleu": delta - 1.5, "exact": delta}}
    return {"system": system, "baseline": baseline, "bleu": test, "exact": dict(test), "per_seed": seeds,
            "seeds_better": sum(d["bleu"] > 0 for d in seeds.values()), "resampling": "seeds and sentences"}


def _claim(text: str, source: str, system: str | None, baseline: str | None, parameters: str, status: str,
           because: str) -> dict:
    return {"claim": text, "source": source, "system": system, "baseline": baseline, "parameters": parameters,
            "status": status, "because": because}


def claim_summary(exp: str = "default") -> dict[str, Any]:
    cfg = {"languages": ["en", "de", "fr"], "concepts": 32, "reverse": ["de"], "scramble": ["fr"], "min_len": 2,
           "max_len": 5, "task_seed": 0, "sentences": {"train": 600, "valid": 20, "test": 100}, "beam": 2,
           "seeds": [1, 2], "bootstrap_samples": 1000, "significance": 0.05, "bootstrap_seed": 12345,
           "resample_seeds": True, "cpu_threads": 1,
           "model": {"embed_dim": 32, "ffn_dim": 64, "heads": 4, "encoder_layers": 2, "decoder_layers": 2},
           "train": {"max_steps": 500, "max_tokens": 1000, "lr": 0.02, "warmup_steps": 100}, "methods": {},
           "dense": {"wide": {"embed_dim": 40, "ffn_dim": 80}}, "dense_tolerance": 0.1}
    systems = {"naive": _system(None, None, {}, (50_000, 50_000, 50_000), 60.0),
               "wide": _system(None, None, {"embed_dim": 40, "ffn_dim": 80}, (62_000, 62_000, 62_000), 61.0,
                               dense=True),
               "lms": _system("lms", None, {"kind": "lms", "rank": 4}, (60_000, 50_000, 60_000), 70.0),
               "fd": _system("fd", "share", {"kind": "fd", "route": "share"}, (80_000, 50_000, 50_000), 64.0),
               "lsl": _system("lsl", None, {"kind": "lsl", "src": [1], "tgt": [2]}, (120_000, 30_000, 50_000), 61.0)}
    comparisons = [_vs("wide", "naive", 1.0, 0.2), _vs("lms", "naive", 10.0, 0.001), _vs("fd", "naive", 4.0, 0.01),
                   _vs("lsl", "naive", 1.0, 0.3), _vs("lms", "wide", 9.0, 0.002)]
    claims = [_claim("LMS > naive at equal shared capacity", "LMS-FD Sec. 2, Table 2", "lms", "naive",
                     "lms shared 50,000 vs naive 50,000", "shown", "lms - naive = +10.00 BLEU"),
              _claim("LMS > a naive of LMS's total size", "LMS-FD Sec. 1", "lms", "wide",
                     "wide 62,000 = 1.03 x lms's 60,000", "shown", "lms - wide = +9.00 BLEU"),
              _claim("FD-Share > naive at naive's size", "LMS-FD Sec. 3.3, Table 1", "fd", "naive",
                     "fd per direction 50,000 vs naive 50,000", "shown", "fd - naive = +4.00 BLEU"),
              _claim("LSL > naive at equal inference cost", "LSL Sec. 1, Table 1", "lsl", "naive",
                     "lsl per direction 50,000 vs naive 50,000", "not shown", "lsl - naive = +1.00 BLEU, p = 0.3"),
              _claim("LSL > a naive of LSL's total size", "LSL Sec. 4.3, Table 1", "lsl", None,
                     "wide 62,000 = 0.52 x lsl's 120,000: beyond ±10%", "not measured",
                     "wide 62,000 = 0.52 x lsl's 120,000: beyond ±10%")]
    return {"status": "measured", "experiment": exp, "baseline": "naive", "config": cfg,
            "directions": ["en-de", "en-fr", "de-en", "fr-en"], "items": 800, "order": list(systems),
            "systems": systems, "comparisons": comparisons, "claims": claims,
            "curves": {"naive-s1": [{"step": 250, "valid_loss": 1.5}, {"step": 500, "valid_loss": 1.25}],
                       "lms-s1": [{"step": 500, "valid_loss": 0.5}]},
            "timing": {"wall_seconds": 150.0, "cpu_seconds": 140.0, "cpu_threads": 1, "jobs": {},
                       "train_seconds": 130.0}}


@pytest.fixture()
def results(tmp_path: Path) -> Results:
    write_json(tmp_path / "results" / "default" / "claim" / "summary.json", claim_summary())
    write_json(tmp_path / "results" / "iwslt14" / "claim" / "summary.json",
               {"status": "not configured", "reason": "experiments.iwslt14 has no claim section"})
    return Results(Params.load(ROOT / "params.yaml"), tmp_path / "results", ROOT / "reports" / "params.csv")


def test_the_claim_table_and_figure_render_from_summary_json(tmp_path: Path, results: Results) -> None:
    out = tmp_path / "reports"
    (item,) = claim_tables(results, out)  # iwslt14: not configured, no item
    assert item.paper == "ours" and item.status == "ours" and "no paper counterpart" in item.caption
    assert item.links == ("tables/ours/claim-default.md", "tables/ours/claim-default.csv",
                          "tables/ours/claim-default-systems.csv", "figures/ours/claim-default.png",
                          "figures/ours/claim-default.pdf")
    assert all((out / link).is_file() for link in item.links)
    md = (out / "tables/ours/claim-default.md").read_text(encoding="utf-8")
    for text in ("Ours only (no paper counterpart)", "3 languages (en, de, fr; word order reverse: de; scramble: fr)",
                 "500 updates of 1,000 tokens (lr 0.02, 100 warm-up updates), seeds 1, 2", "over 1,000 sentence "
                 "resamples", "t on 1 degrees of freedom (seeds - 1)",
                 "Claims marked 'Ours' are extensions no paper makes",
                 "| LMS > naive at equal shared capacity | LMS-FD Sec. 2, Table 2 | lms vs naive | "
                 "lms shared 50,000 vs naive 50,000 | +10.00 [+8.50, +11.50] | 0.001 |",
                 "| 2/2 | established (lms - naive = +10.00 BLEU) |",
                 "| 1/2 | not established (lsl - naive = +1.00 BLEU, p = 0.3) |",
                 "| LSL > a naive of LSL's total size | LSL Sec. 4.3, Table 1 | lsl | wide 62,000 = 0.52 x lsl's "
                 "120,000: beyond ±10% |  |  |  |  | not tested",
                 "| lms | lms: rank 4 | 60,000 | 50,000 | 60,000 | 70.00 [68.00, 72.00] |",
                 "| wide | naive, embed_dim 40, ffn_dim 80 | 62,000 |",
                 "Naive's validation loss (bits per token) along the budget: s1: 1.500 @250, 1.250 @500.",
                 "](../../figures/ours/claim-default.png)"):
        assert text in md, text
    rows = list(csv.DictReader((out / "tables/ours/claim-default.csv").open(encoding="utf-8")))
    # the report's words for the stage's shown / not shown / not measured (lsnmt.report.claim_answer.VERDICTS)
    verdicts = ["established", "established", "established", "not established", "not tested"]
    assert [r["verdict"].split(" (")[0] for r in rows] == verdicts
    assert rows[1]["compared"] == "lms vs wide" and rows[1]["source"] == "LMS-FD Sec. 1"
    systems = list(csv.DictReader((out / "tables/ours/claim-default-systems.csv").open(encoding="utf-8")))
    assert [r["system"] for r in systems] == ["naive", "wide", "lms", "fd", "lsl"]
    assert systems[0]["Δ BLEU vs naive [95% CI]"] == "(baseline)" and systems[3]["method"] == "fd: route share"
    assert systems[4]["params per direction"] == "50,000" and systems[4]["params shared"] == "30,000"


def test_degenerate_comparisons_read_n_a(tmp_path: Path, results: Results) -> None:
    summary = claim_summary()
    summary["comparisons"][3] = _vs("lsl", "naive", 0.1, None)
    write_json(results.results_dir / "default" / "claim" / "summary.json", summary)
    claim_tables(results, tmp_path / "reports")
    md = (tmp_path / "reports/tables/ours/claim-default.md").read_text(encoding="utf-8")
    assert "| n/a | " in md


def test_the_report_lists_the_claim() -> None:
    assert claim_tables in specs.EXTRA
