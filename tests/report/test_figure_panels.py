"""Figures without their data, with one point, and with crowded labels: a missing panel is one line of text (no
empty axes), a lone point gets padded limits, and no two labels (the points' or the ticks') overlap."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure

from lsnmt import figures
from lsnmt.experiment.params import Params
from lsnmt.figures import figure, pad_singular, save
from lsnmt.report.runs import Results
from lsnmt.report.specs import FIGURES, figs_clm

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def params() -> Params:
    return Params.load(ROOT / "params.yaml")


@pytest.fixture
def saved(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What each figure looked like when saved: its axes and their limits, its texts, its labels' and tick labels'
    boxes (after the real ``save``: the final layout)."""
    seen: list[dict[str, Any]] = []
    real = figures.save

    def spy(fig: Figure, out_dir: Path, stem: str, *args: Any, **kwargs: Any) -> tuple[Path, Path]:
        paths = real(fig, out_dir, stem, *args, **kwargs)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        seen.append({
            "stem": stem,
            "axes": [{"xlim": ax.get_xlim(), "ylim": ax.get_ylim(), "xscale": ax.get_xscale(),
                      "labels": [t.get_window_extent(renderer) for t in ax.texts if t.get_text()],
                      "xticks": [t.get_window_extent(renderer)
                                 for t in ax.get_xticklabels() + ax.get_xticklabels(minor=True)
                                 if t.get_text() and t.get_visible()]} for ax in fig.axes],
            "texts": [t.get_text() for t in fig.texts],
        })
        return paths

    monkeypatch.setattr(figures, "save", spy)
    for module in {f.__module__ for f in FIGURES}:  # drawers that import save themselves
        monkeypatch.setattr(f"{module}.save", spy, raising=False)
    return seen


def _overlaps(boxes: list[Any]) -> list[tuple[int, int]]:
    return [(i, j) for i, a in enumerate(boxes) for j, b in enumerate(boxes[i + 1:], i + 1) if a.overlaps(b)]


def _sweep_summary(results: Path, exp: str, side: str, bleu: dict[str, float]) -> None:
    systems = {n: {"method": "sclm", "route": None, "top_w": int(n.split("_w")[1]) if "_w" in n else None}
               for n in bleu}
    summary = {"experiment": exp, "methods": list(bleu), "metrics": ["bleu"], "systems": systems,
               "scores": {n: {"bleu": {"averages": {"all": v, side: v}}} for n, v in bleu.items()}}
    out = results / exp / "evaluate"
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(json.dumps(summary), encoding="utf-8")


def test_clm_figure4_without_data_is_lines_of_text_and_no_axes(tmp_path: Path, params: Params,
                                                              saved: list[dict[str, Any]]) -> None:
    results = Results(params, tmp_path / "results", tmp_path / "none.csv")
    assert figs_clm.fig4(results, tmp_path / "reports" / "figures").status == "not run"
    (fig,) = saved
    assert fig["axes"] == [], f"{len(fig['axes'])} empty panels"
    assert len(fig["texts"]) == 6 and all(t.startswith("not run: ") and "\n" not in t for t in fig["texts"])


def test_every_figure_without_data_draws_no_empty_axes(tmp_path: Path, params: Params,
                                                       saved: list[dict[str, Any]]) -> None:
    """With no run at all, a figure's axes are the paper's own numbers or nothing (LMS-FD Figure 1 and 4 plot
    the paper's numbers); every missing panel is a line."""
    results = Results(params, tmp_path / "results", tmp_path / "none.csv")
    for draw in FIGURES:
        draw(results, tmp_path / "reports" / "figures", None)
    empty = [f["stem"] for f in saved for ax in f["axes"] if ax["xlim"] == (0.0, 1.0) and ax["ylim"] == (0.0, 1.0)]
    assert not empty, f"empty axes in {empty}"
    assert all("\n" not in t for f in saved for t in f["texts"])


def test_a_lone_point_gets_limits_around_it(tmp_path: Path) -> None:
    with figure(ncols=3) as (fig, axes):
        axes[0][0].plot([1.95], [-0.5], marker="o")  # a parameter count (M) and a ∆BLEU
        axes[0][1].plot([392.1], [7.0], marker="o")  # a perplexity
        axes[0][2].plot([8.0], [1.0], marker="o")
        axes[0][2].set_xscale("log", base=2)
        save(fig, tmp_path, "one")
        assert axes[0][0].get_xlim() == pytest.approx((0.95, 2.95)) and axes[0][0].get_ylim() == (-1.5, 0.5)
        assert axes[0][1].get_xlim() == pytest.approx((352.89, 431.31))
        assert axes[0][2].get_xlim() == (4.0, 16.0)
        with figure() as (_, empty):  # nothing plotted: left alone
            pad_singular(empty[0][0])
            assert empty[0][0].get_xlim() == (0.0, 1.0)


def test_clm_figure4_one_w_panel_is_padded(tmp_path: Path, params: Params, saved: list[dict[str, Any]]) -> None:
    _sweep_summary(tmp_path / "results", "default", "en-xx", {"sclm": 3.0, "sclm_w2": 2.5})
    results = Results(params, tmp_path / "results", tmp_path / "none.csv")
    figs_clm.fig4(results, tmp_path / "reports" / "figures")
    (fig,) = saved
    (panel,) = fig["axes"]  # the default's en-xx sweep; the five others are lines of text
    assert panel["xscale"] == "log" and panel["xlim"] == (1.0, 4.0)
    assert len(fig["texts"]) == 5


def test_xelm_figure4_labels_do_not_overlap(tmp_path: Path, params: Params, saved: list[dict[str, Any]]) -> None:
    """Eight languages, two by two at the same training tokens, all within a decade, with nearly the same gains
    (the default's shape): the language labels and the x tick labels (major and minor) each stay apart."""
    from lsnmt.report.specs import figs_xelm

    out = tmp_path / "results" / "default" / "xelm" / "eval"
    out.mkdir(parents=True)
    rows = ["lang\ttrain_tokens\tseed\tdense\ttypology\tgain_vs_seed\tgain_vs_dense"]
    for i, lang in enumerate(("en", "de", "fr", "ru", "tr", "hi", "vi", "sw")):
        rows.append(f"{lang}\t{10000 + 10 * (i // 2)}\t400\t390\t391\t{10 + 0.1 * i}\t{-1.0 + 0.01 * i}")
    (out / "figure4.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    results = Results(params, tmp_path / "results", tmp_path / "none.csv")
    figs_xelm.fig4(results, tmp_path / "reports" / "figures")
    (fig,) = saved
    (panel,) = fig["axes"]
    assert len(panel["labels"]) == 8 and not _overlaps(panel["labels"])
    assert len(panel["xticks"]) >= 2 and not _overlaps(panel["xticks"]), "x tick labels overlap"
