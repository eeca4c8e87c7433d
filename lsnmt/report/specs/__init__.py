"""What the report builds: bindings of the papers' tables to our runs, figure drawers, our own tables.

``BINDINGS[(paper, stem)]`` binds ``reports/paper/<paper>/<stem>.csv`` (a table without a binding is still
written, every cell of ours "not run"); ``FIGURES`` draw one figure each; ``EXTRA`` write tables of our own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from lsnmt.figures import FigureOut
from lsnmt.report.item import Item
from lsnmt.report.paper_table import Binding
from lsnmt.report.runs import Results
from lsnmt.report.specs import (
    claim,
    clm,
    extra,
    figs_clm,
    figs_lmsfd,
    figs_xelm,
    lmsfd,
    lsl,
    nerqa,
    significance,
    xelm,
)

BINDINGS: dict[tuple[str, str], Binding] = {**lmsfd.BINDINGS, **nerqa.BINDINGS, **clm.BINDINGS, **lsl.BINDINGS,
                                               **xelm.BINDINGS}
FIGURES: list[Callable[[Results, Path, Path | None], FigureOut]] = [
    figs_lmsfd.fig1, figs_lmsfd.fig4, figs_clm.fig2, figs_clm.tsne, figs_clm.fig4, lsl.fig3, lsl.fig4,
    figs_xelm.fig2, figs_xelm.fig3, figs_xelm.fig4]
EXTRA: list[Callable[[Results, Path], list[Item]]] = [extra.params_table, extra.data_tables, extra.heldout_table,
                                                      significance.significance_table, claim.claim_tables]
