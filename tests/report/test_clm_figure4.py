"""CLM Figure 4 (Sec. 5.4): ∆BLEU of sCLM's top-w decodings against the full model, from the evaluate summaries of
the two OPUS-100 CLM experiments (the systems ``sclm_w<w>`` of ``sweep_top_w``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsnmt.experiment.params import Params
from lsnmt.report.runs import Results
from lsnmt.report.specs import figs_clm

ROOT = Path(__file__).resolve().parents[2]


def _summary(results: Path, exp: str, side: str, bleu: dict[str, float]) -> None:
    """``summary.json`` as evaluate writes it, with the keys Figure 4 reads: ``systems`` and the side's average."""
    systems = {
        n: {"method": "sclm", "route": None, "top_w": int(n.split("_w")[1]) if "_w" in n else None} for n in bleu
    }
    summary = {
        "experiment": exp,
        "methods": list(bleu),
        "metrics": ["bleu"],
        "systems": systems,
        "scores": {n: {"bleu": {"averages": {"all": v, side: v}}} for n, v in bleu.items()},
    }
    out = results / exp / "evaluate"
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


@pytest.fixture(scope="module")
def params() -> Params:
    return Params.load(ROOT / "params.yaml")


def test_figure4_plots_each_w_against_the_full_model(tmp_path: Path, params: Params) -> None:
    _summary(tmp_path / "results", "opus100_clm_enxx", "en-xx", {"sclm": 30.0, "sclm_w14": 29.5, "sclm_w1": 20.0})
    results = Results(params, tmp_path / "results", tmp_path / "none.csv")
    assert figs_clm.sweep_points(results, results.run("opus100_clm_enxx"), "en-xx") == [(1, -10.0), (14, -0.5)]
    assert figs_clm.sweep_points(results, results.run("opus100_clm_xxen"), "xx-en") == []  # not run
    fig = figs_clm.fig4(results, tmp_path / "reports" / "figures")
    assert fig.status == "ours" and fig.name == "Figure 4"
    assert fig.files == ("figures/clm/figure4.png", "figures/clm/figure4.pdf")
    assert all((tmp_path / "reports" / f).stat().st_size > 1000 for f in fig.files)


def test_figure4_without_paper_scale_sweep_scores_is_not_run(tmp_path: Path, params: Params) -> None:
    """The full model alone draws nothing; the embedded default's sweep gets its own panel (NOT comparable, as in
    Figure 2) and leaves the status "not run"."""
    _summary(tmp_path / "results", "opus100_clm_enxx", "en-xx", {"sclm": 30.0})  # the full model only
    _summary(tmp_path / "results", "default", "en-xx", {"sclm": 3.0, "sclm_w2": 2.5})
    results = Results(params, tmp_path / "results", tmp_path / "none.csv")
    assert figs_clm.sweep_points(results, results.run("default"), "en-xx") == [(2, -0.5)]
    assert figs_clm.fig4(results, tmp_path / "reports" / "figures").status == "not run"
