"""Three figures of the first run, fixed: LSL Figure 3 does not zoom into near-equal mixing weights, x-elm Figure 3
ticks the number of experts at whole numbers, and x-elm Figure 4's language labels overlap neither each other nor
any point and stay inside the panel (adjustText). Each test failed on the drawers before the fix."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from matplotlib.figure import Figure
from matplotlib.transforms import Bbox

from lsnmt import figures
from lsnmt.experiment.params import Params
from lsnmt.report.runs import Results
from lsnmt.report.specs import FIGURES, figs_xelm, lsl

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def params() -> Params:
    return Params.load(ROOT / "params.yaml")


@pytest.fixture
def saved(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    """Every figure as it was saved (after the real ``save``: final limits, layout and labels), with the renderer
    that drew it (``fig._test_renderer``: the figure is closed afterwards)."""
    seen: list[Figure] = []
    real = figures.save

    def spy(fig: Figure, out_dir: Path, stem: str, *args: Any, **kwargs: Any) -> tuple[Path, Path]:
        paths = real(fig, out_dir, stem, *args, **kwargs)
        fig.canvas.draw()
        fig._test_renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
        seen.append(fig)
        return paths

    monkeypatch.setattr(figures, "save", spy)
    for module in {f.__module__ for f in FIGURES}:
        monkeypatch.setattr(f"{module}.save", spy, raising=False)
    return seen


def _xelm_eval(results: Path) -> Path:
    out = results / "default" / "xelm" / "eval"
    out.mkdir(parents=True)
    return out


def test_lsl_figure3_draws_near_equal_weights_on_the_whole_0_1_scale(
    tmp_path: Path, params: Params, saved: list[Figure]
) -> None:
    """Weights of 0.32-0.35 (the default's search: every layer near a third each) drawn on 0.31-0.36 look like
    structure; softmax weights are drawn on 0-1."""
    arch = {
        "mean": [[0.33, 0.34, 0.33], [0.32, 0.35, 0.33], [0.34, 0.32, 0.34]],
        "std": [[0.004, 0.003, 0.002]] * 3,
        "notation": "shared / src / tgt",
    }
    path = tmp_path / "results" / "default" / "search" / "lsl_search" / "architecture.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(arch), encoding="utf-8")
    lsl.fig3(Results(params, tmp_path / "results", tmp_path / "none.csv"), tmp_path / "reports" / "figures")
    (fig,) = saved
    (ax,) = fig.axes
    assert ax.get_ylim() == (0.0, 1.0)


def test_a_spread_wider_than_the_asked_span_keeps_its_limits(tmp_path: Path) -> None:
    with figures.figure(ncols=2) as (fig, axes):
        axes[0][0].plot([1, 2], [0.1, 0.9])  # spreads over more than the 0.5 asked
        axes[0][1].plot([1, 2], [0.97, 0.99])  # near the top: the span is moved inside [0, 1]
        figures.min_span(axes[0][0], 0.5, lo=0.0, hi=1.0)
        figures.min_span(axes[0][1], 1.0, lo=0.0, hi=1.0)
        axes[0][0].set_ylim(0.05, 0.95)
        figures.save(fig, tmp_path, "spans")
        assert axes[0][0].get_ylim() == (0.05, 0.95)
        assert axes[0][1].get_ylim() == (0.0, 1.0)


def test_xelm_figure3_ticks_k_at_whole_numbers(tmp_path: Path, params: Params, saved: list[Figure]) -> None:
    rows = ["method\tk\tppl", "ensemble\t1\t400.0", "ensemble\t2\t390.0", "top-1\t1\t400.0", "top-1\t2\t395.0"]
    (_xelm_eval(tmp_path / "results") / "figure3.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    figs_xelm.fig3(Results(params, tmp_path / "results", tmp_path / "none.csv"), tmp_path / "reports" / "figures")
    (fig,) = saved
    (ax,) = fig.axes
    lo, hi = ax.get_xlim()
    ticks = [t for t in ax.get_xticks() if lo <= t <= hi]
    assert ticks and all(float(t).is_integer() for t in ticks), ticks


def _marker_boxes(fig: Figure) -> list[Bbox]:
    """Each scatter marker's box on the canvas (a square of the marker's size around its centre)."""
    boxes = []
    for ax in fig.axes:
        for coll in ax.collections:
            half = math.sqrt(coll.get_sizes()[0]) / 2 * fig.dpi / 72
            for x, y in ax.transData.transform(coll.get_offsets()):
                boxes.append(Bbox([[x - half, y - half], [x + half, y + half]]))
    return boxes


def test_xelm_figure4_labels_overlap_no_label_and_no_point(tmp_path: Path, params: Params, saved: list[Figure]) -> None:
    """Ten languages in pairs at nearly the same training tokens, their gains over dense and over the seed LM close
    together: every label is drawn, apart from the other labels and from every marker of both series, inside
    the panel."""
    rows = ["lang\ttrain_tokens\tseed\tdense\ttypology\tgain_vs_seed\tgain_vs_dense"]
    langs = ("en", "de", "fr", "ru", "tr", "hi", "vi", "sw", "he", "ja")
    for i, lang in enumerate(langs):
        rows.append(f"{lang}\t{6000 + 5000 * (i // 2) + 50 * i}\t400\t390\t391\t{0.5 + 0.02 * i}\t{0.45 + 0.02 * i}")
    (_xelm_eval(tmp_path / "results") / "figure4.tsv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    figs_xelm.fig4(Results(params, tmp_path / "results", tmp_path / "none.csv"), tmp_path / "reports" / "figures")
    (fig,) = saved
    (ax,) = fig.axes
    renderer = fig._test_renderer  # type: ignore[attr-defined]
    labels = [t for t in ax.texts if t.get_text() in langs]
    assert sorted(t.get_text() for t in labels) == sorted(langs)
    boxes = [t.get_window_extent(renderer) for t in labels]
    clash = [
        (labels[i].get_text(), labels[j].get_text())
        for i, a in enumerate(boxes)
        for j, b in enumerate(boxes[i + 1 :], i + 1)
        if a.overlaps(b)
    ]
    assert not clash, f"labels overlap: {clash}"
    on_points = [
        t.get_text() for t, box in zip(labels, boxes, strict=True) if any(box.overlaps(m) for m in _marker_boxes(fig))
    ]
    assert not on_points, f"labels on a marker: {on_points}"
    panel = ax.get_window_extent(renderer)
    outside = [
        t.get_text()
        for t, b in zip(labels, boxes, strict=True)
        if not (panel.x0 <= b.x0 and b.x1 <= panel.x1 and panel.y0 <= b.y0 and b.y1 <= panel.y1)
    ]
    assert not outside, f"labels outside the panel: {outside}"
