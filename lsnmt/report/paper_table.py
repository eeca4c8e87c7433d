"""One paper table with our numbers beside the paper's: bindings, cells and the table's status.

A :class:`Binding` says which experiment of ``params.yaml`` reproduces a printed table at paper scale and how
its cells map onto our results: printed rows name methods (:class:`~lsnmt.report.cells.Row`) and printed
columns name selectors (``lsnmt/report/cells.py``), or the other way round for tables printed with methods as
columns. Every cell then holds the paper's text, our value at paper scale (``None``: not run), the difference,
and our value on the embedded ``default`` run (never comparable: a tiny model on tiny data).

Status of a table: ``differs`` when a compared cell is out of tolerance (``params differ`` when the only cells
compared are parameter counts: no score was compared, so "differs" would overstate it; scores: ``score_tol``
points; rates: ``rate_tol`` points; parameters, data counts and sizes: ``params_tol`` relative; perplexities:
``ppl_tol`` relative; COMET: ``comet_tol`` absolute on its 0-1 scale; text cells such as top-5 language lists: the
same set of items); otherwise ``not run`` while any bound cell has no paper-scale value of ours (e.g. parameter counts
reproduced, scores not run, or a win ratio withheld between degenerate outputs: ``cells.NO_VERDICT``), and
``reproduced`` when every bound cell is compared and within tolerance.
:attr:`Built.detail` says per kind how many cells matched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

import pandas as pd

from lsnmt.experiment.params import Experiment
from lsnmt.report import paper as paper_tables
from lsnmt.report.cells import DEFAULT, Row, Selector
from lsnmt.report.runs import Results, Run, describe

Status = Literal["reproduced", "differs", "params differ", "not run"]
RowKey = str | tuple[str, ...]
Bound = str | Row | Selector


@dataclass(frozen=True)
class Binding:
    """How one printed table maps onto our runs (see the module docstring)."""

    paper: str
    """``lmsfd``, ``clm``, ``lsl`` or ``xelm`` (``reports/paper/<paper>/``)."""
    table: str
    """File stem, e.g. ``table2``."""
    experiment: str | None
    """The experiment of ``params.yaml`` that reproduces the table at paper scale (``None``: none does)."""
    rows: Mapping[RowKey, Bound] = field(default_factory=dict)
    """Printed row label (the first key column, or a tuple of all key columns) -> a method (a name or a
    :class:`Row`) or, for tables with methods as columns, a selector."""
    columns: Mapping[str, Bound] = field(default_factory=dict)
    """Printed column header -> a selector or, for tables with methods as columns, a method. A key column may be
    bound too (x-elm Table 4's ``# Tokens``): its cells then carry our value beside the printed key."""
    gains: bool = False
    """Rows other than the baseline print score gains over it (``+1.17``): ours is computed the same way."""
    baseline: str = "naive"
    on_default: bool = True
    """Also fill the cells from the embedded default run where that run has the method."""
    score_tol: float = 1.0
    rate_tol: float = 5.0
    params_tol: float = 0.02
    ppl_tol: float = 0.05
    comet_tol: float = 0.01
    note: str = ""
    describe: Callable[[Experiment], str] | None = None
    """How the captions name an experiment (default ``lsnmt.report.runs.describe``: the translation setup)."""
    unbound: Callable[[tuple[str, ...], str], bool] | None = None
    """Cells (row keys, column) the paper leaves empty by construction, e.g. a matrix's diagonal: not bound."""


@dataclass(frozen=True)
class Cell:
    keys: tuple[str, ...]
    column: str
    paper: str
    paper_value: float | None
    method: str | None
    """Our method behind the cell; ``None``: the cell is not bound."""
    kind: str
    ours: float | str | None
    default: float | str | None
    mark: str = ""
    """Printed after our paper-scale value (a significance dagger, ``Selector.mark``)."""
    default_mark: str = ""

    @property
    def delta(self) -> float | None:
        if not isinstance(self.ours, float | int) or self.paper_value is None:
            return None
        return self.ours - self.paper_value


@dataclass(frozen=True)
class Built:
    """A built table: the printed table, its cells (bound and not), captions and status."""

    meta: paper_tables.TableMeta
    binding: Binding | None
    frame: pd.DataFrame
    cells: list[Cell]
    status: Status
    detail: str
    """Per kind of cell: bound, compared and within tolerance, e.g. ``params 6/6/6, score 0/27``."""
    ours_caption: str
    default_caption: str


def paper_value(text: str) -> float | None:
    """The printed cell as a number (the first of a compound cell such as ``15.28 (7.23)``), else ``None``."""
    try:
        return paper_tables.number(text)
    except ValueError:
        try:
            return paper_tables.numbers(text)[0]
        except ValueError:
            return None


def _as_row(x: Bound | None) -> Row | None:
    return Row(x) if isinstance(x, str) else x if isinstance(x, Row) else None


def resolve(b: Binding, keys: tuple[str, ...], column: str) -> tuple[Row, Selector] | None:
    """The method and selector of one cell, whichever of row and column names which; ``None``: unbound."""
    if b.unbound is not None and b.unbound(keys, column):
        return None
    r = b.rows.get(keys, b.rows.get(keys[0]))
    c = b.columns.get(column)
    if _as_row(r) is not None and isinstance(c, Selector):
        return _as_row(r), c
    if isinstance(r, Selector) and _as_row(c) is not None:
        return _as_row(c), r
    return None


def ours(b: Binding, sel: Selector, results: Results, run: Run | None, row: Row) -> float | str | None:
    """Our value of one cell; a gain over the baseline row where the paper prints gains, or a difference of
    two methods where the row says so (``Row.minus``)."""
    if run is None:
        return None
    got = sel.value(results, run, row)
    if row.minus:
        other = sel.value(results, run, Row(row.minus, arg=row.arg))
        ok = isinstance(got, float | int) and isinstance(other, float | int)
        return got - other if ok else None  # type: ignore[operator]
    if got is None or not b.gains or sel.kind != "score" or row.method == b.baseline:
        return got
    base = sel.value(results, run, Row(b.baseline, arg=row.arg))
    return None if base is None or isinstance(base, str) or isinstance(got, str) else got - base


def within(b: Binding, cell: Cell) -> bool:
    """Whether our paper-scale value reproduces the printed one (see the module docstring)."""
    if cell.kind == "text":
        return set(str(cell.ours).split()) == set(cell.paper.split())
    assert isinstance(cell.ours, float | int) and cell.paper_value is not None
    diff = abs(cell.ours - cell.paper_value)
    if cell.kind == "comet":
        return diff <= b.comet_tol
    if cell.kind in ("params", "ppl", "count", "size"):
        tol = b.ppl_tol if cell.kind == "ppl" else b.params_tol
        return diff <= tol * max(abs(cell.paper_value), 1e-9)
    return diff <= (b.rate_tol if cell.kind == "rate" else b.score_tol)


def build(meta: paper_tables.TableMeta, frame: pd.DataFrame, binding: Binding | None, results: Results) -> Built:
    """Every cell of the printed ``frame`` with ours beside it (``None`` where not bound or not run)."""
    keys = list(meta.keys)
    run = results.run(binding.experiment) if binding and binding.experiment else None
    default = results.run(DEFAULT) if binding and binding.on_default else None
    cells: list[Cell] = []
    bound_n: Counter = Counter()
    compared: Counter = Counter()
    matched: Counter = Counter()
    for _, line in frame.iterrows():
        key = tuple(str(line[k]) for k in keys)
        for col in frame.columns:
            if col in keys and not (binding and col in binding.columns):
                continue
            text = str(line[col])
            bound = resolve(binding, key, col) if binding else None
            if bound is None:
                cells.append(Cell(key, col, text, paper_value(text), None, "score", None, None))
                continue
            row, sel = bound
            cell = Cell(key, col, text, sel.printed(run, line, paper_value(text)), row.method, sel.kind,
                        ours(binding, sel, results, run, row), ours(binding, sel, results, default, row),
                        sel.mark(results, run, row) if run is not None else "",
                        sel.mark(results, default, row) if default is not None else "")
            cells.append(cell)
            if cell.kind != "text" and cell.paper_value is None:
                continue  # nothing printed to compare with (a dash)
            bound_n[cell.kind] += 1
            if cell.ours is not None and (cell.kind == "text" or not isinstance(cell.ours, str)):  # n/a: not compared
                compared[cell.kind] += 1
                matched[cell.kind] += within(binding, cell)
    status: Status = ("differs" if matched != compared else
                      "reproduced" if bound_n and compared == bound_n else "not run")
    if status == "differs" and {k for k, n in compared.items() if n} == {"params"}:
        status = "params differ"
    detail = ", ".join(f"{k}: {compared[k]} of {n} compared, {matched[k]} within tolerance"
                       for k, n in sorted(bound_n.items())) or "no cell bound to our runs"
    name = (binding.describe if binding and binding.describe else None) or describe
    if run is not None:
        ours_caption = "ours: " + name(run.exp)
    elif binding and binding.experiment:
        ours_caption = f"ours: experiment `{binding.experiment}` is not defined in this params.yaml"
    else:
        ours_caption = "ours: no experiment of ours reproduces it"
    default_caption = ("embedded default (NOT comparable with the paper's scale): " + name(default.exp)
                       if default is not None else "")
    return Built(meta, binding, frame, cells, status, detail, ours_caption, default_caption)
