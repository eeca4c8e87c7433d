"""A built table as Markdown, LaTeX and CSV: paper value, ours and the difference per bound column.

Unbound columns show the paper's text only; a bound cell of ours with no result reads ``not run``, never a
number. The embedded default run follows in its own table, labelled as not comparable.
"""

from __future__ import annotations

import csv
import io

from lsnmt.report.paper_table import Built, Cell

NOT_RUN = "not run"


def fmt(value: float | str | None, kind: str = "score") -> str:
    if value is None:
        return NOT_RUN
    if isinstance(value, str):
        return value
    if kind == "params":
        return f"{value / 1e6:.2f}M"
    if kind == "count":
        return f"{value:,.0f}"
    if kind == "size" and abs(value) < 0.01:
        return f"{value:.3g}"  # a tiny corpus (the embedded default) in GiB
    return f"{value:.4f}" if kind == "comet" else f"{value:.2f}"


def marked(value: float | str | None, kind: str, mark: str) -> str:
    """``fmt`` with the cell's mark (a significance dagger) after a value; "not run" stays bare."""
    return fmt(value, kind) + (mark if value is not None else "")


def fmt_delta(value: float | None, kind: str = "score") -> str:
    if value is None:
        return ""
    if kind == "count":
        return f"{value:+,.0f}"
    if kind == "comet":
        return f"{value:+.4f}"
    return f"{value / 1e6:+.2f}M" if kind == "params" else f"{value:+.2f}"


def _bound(b: Built) -> list[str]:
    """Printed columns with at least one bound cell."""
    bound = {c.column for c in b.cells if c.method is not None}
    return [c for c in b.frame.columns if c in bound]


def grid(b: Built) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the paper-scale table: keys, then per column paper [/ ours / Δ]."""
    keys = list(b.meta.keys)
    bound = set(_bound(b))
    header = list(keys)
    for col in b.frame.columns:
        if col in keys:  # a bound key column: ours and Δ after the keys
            header += [f"{col} (ours)", f"{col} (Δ)"] if col in bound else []
            continue
        header += [col, f"{col} (ours)", f"{col} (Δ)"] if col in bound else [col]
    by_row: dict[tuple[str, ...], dict[str, Cell]] = {}
    for cell in b.cells:
        by_row.setdefault(cell.keys, {})[cell.column] = cell
    rows = []
    for key, cells in by_row.items():
        line = list(key)
        for col, cell in cells.items():
            if col not in keys:
                line.append(cell.paper)
            if col in bound:
                if cell.method is None:
                    line += ["", ""]
                else:
                    line += [marked(cell.ours, cell.kind, cell.mark), fmt_delta(cell.delta, cell.kind)]
        rows.append(line)
    return header, rows


def default_grid(b: Built) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the embedded-default table: bound rows and columns, our default values."""
    keys = list(b.meta.keys)
    bound = _bound(b)
    rows = []
    by_row: dict[tuple[str, ...], dict[str, Cell]] = {}
    for cell in b.cells:
        by_row.setdefault(cell.keys, {})[cell.column] = cell
    for key, cells in by_row.items():
        got = [cells[c] for c in bound if c in cells and cells[c].method is not None]
        if got and any(c.default is not None for c in got):
            shown = (c for c in (cells.get(col) for col in bound) if c is not None)
            rows.append([*key, got[0].method or "", *(marked(c.default, c.kind, c.default_mark) if c.method else ""
                                                       for c in shown)])
    return [*keys, "method", *(f"{c} (ours)" if c in keys else c for c in bound)], rows


def md_table(header: list[str], rows: list[list[str]]) -> str:
    esc = [[x.replace("|", "\\|") for x in r] for r in [header, *rows]]
    out = ["| " + " | ".join(esc[0]) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    out += ["| " + " | ".join(r) + " |" for r in esc[1:]]
    return "\n".join(out)


def title(b: Built) -> str:
    return f"{b.meta.table} of {b.meta.paper}"


def markdown(b: Built) -> str:
    header, rows = grid(b)
    parts = [f"# {title(b)}", "", f"*{b.meta.caption}*", "",
             f"Status: **{b.status}** (paper scale: {b.detail}). Paper values as printed "
             f"({b.meta.source}). {b.ours_caption}.", ""]
    if b.binding and b.binding.note:
        parts += [b.binding.note, ""]
    parts += [md_table(header, rows), ""]
    if b.binding and b.default_caption:
        dh, dr = default_grid(b)
        if dr:
            parts += ["## Embedded default run", "", f"{b.default_caption}.", "", md_table(dh, dr), ""]
    if b.meta.notes:
        parts += [f"Transcription notes: {b.meta.notes}", ""]
    return "\n".join(parts)


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
        "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def tex_escape(s: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in s)


def latex(b: Built) -> str:
    header, rows = grid(b)
    cols = "l" * len(b.meta.keys) + "r" * (len(header) - len(b.meta.keys))
    lines = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{cols}}}", r"\toprule",
             " & ".join(tex_escape(h) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join(tex_escape(x) for x in r) + r" \\" for r in rows]
    lines += [r"\bottomrule", r"\end{tabular}",
              rf"\caption{{{tex_escape(title(b))}: {tex_escape(b.meta.caption)} Status: {b.status}. "
              rf"{tex_escape(b.ours_caption)}.}}", r"\end{table}", ""]
    return "\n".join(lines)


def csv_text(b: Built) -> str:
    """Long format: one line per cell, keys, column, paper text and value, method, ours, Δ, default, and the
    marks printed after ours / default (``†``: not significant)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow([*b.meta.keys, "column", "paper", "paper_value", "method", "ours", "delta", "default", "mark",
                "default_mark"])
    for c in b.cells:
        bound = c.method is not None
        w.writerow([*c.keys, c.column, c.paper, "" if c.paper_value is None else c.paper_value, c.method or "",
                    (NOT_RUN if c.ours is None else c.ours) if bound else "",
                    "" if c.delta is None else round(c.delta, 6),
                    (NOT_RUN if c.default is None else c.default) if bound else "", c.mark, c.default_mark])
    return buf.getvalue()
