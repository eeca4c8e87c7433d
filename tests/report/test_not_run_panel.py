"""A "not run" panel's note stays inside its own panel (CLM Figure 2 and LSL Figure 3 spilled over their
neighbours: matplotlib's ``wrap=True`` wraps to the figure's width, not the panel's)."""

from __future__ import annotations

from lsnmt.figures import figure, not_run_panel


def test_a_long_note_in_a_narrow_panel_stays_inside_it() -> None:
    with figure(width=9.0, height=3.0, ncols=3) as (fig, axes):
        what = "paper en-xx: the paper prints no numbers for Figure 2, only the plot (and more words to wrap)"
        for ax in axes[0]:
            not_run_panel(ax, what)
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for ax in axes[0]:
            box, note = ax.get_window_extent(renderer), ax.texts[0].get_window_extent(renderer)
            assert box.x0 <= note.x0 and note.x1 <= box.x1, (box, note)
            assert box.y0 <= note.y0 and note.y1 <= box.y1, (box, note)
            assert ax.texts[0].get_text().startswith("not run: paper en-xx")
