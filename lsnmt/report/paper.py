"""The four papers' result tables as data: ``reports/paper/<paper>/table<N>.csv`` plus ``index.yaml``.

Each CSV mirrors one printed table: the key columns (``TableMeta.keys``) hold the row labels, the other columns
the printed headers (multi-level headers flattened as ``Top / Sub``), and every cell the printed text
(``+0.35``, ``76.96M``, ``59.0†``, ``15.28 (7.23)``; ``""`` for an empty cell). Nothing is converted on disk;
:func:`number` and :func:`numbers` turn printed cells into floats when a caller compares them::

    >>> df = load("lmsfd", 3)                      # strings, key column "Methods"
    >>> number(df.loc[1, "en→xx / all"])           # "+2.66"
    2.66
    >>> numbers("195.2 ± 2.6")
    [195.2, 2.6]
"""

from __future__ import annotations

import csv
import functools
import re
from dataclasses import dataclass, fields
from pathlib import Path

import pandas as pd

from lsnmt.io import DataError
from lsnmt.typed import ConfigError, load_yaml

ROOT = Path(__file__).resolve().parents[2] / "reports" / "paper"
PAPERS = ("lmsfd", "clm", "lsl", "xelm")
MARKERS = "*†‡§¶♢"
"""Footnote and significance marks that may trail a printed number (LSL Table 8's ``†``, CLM's ``♢``)."""
NOT_APPLICABLE = frozenset({"", "-", "–", "—", "−"})
"""Cells that print no value: empty, or a dash (hyphen, en dash, em dash, U+2212 minus)."""
_SCALE = {"K": 1e3, "M": 1e6, "B": 1e9, "%": 1.0, "x": 1.0, "×": 1.0}
_NUMBER = re.compile(r"([+-]?)(\d+(?:\.\d+)?|\.\d+)\s*([KMB%x×]?)")
_FILE = re.compile(r"(?P<paper>[a-z]+)/table(?P<table>[0-9A-Z]+)\.csv")


@dataclass(frozen=True, kw_only=True)
class TableMeta:
    """One entry of ``reports/paper/index.yaml``: where a table comes from and how to read it."""

    file: str
    """Path of the CSV relative to ``reports/paper/``, e.g. ``lsl/table8.csv``."""
    paper: str
    """Full citation: authors, title, venue and year."""
    table: str
    """The table as the paper names it, e.g. ``Table 8``."""
    caption: str
    """The printed caption, whitespace normalised."""
    keys: tuple[str, ...]
    """The row-label columns; together they identify a row."""
    units: str
    """What the numbers measure (BLEU, chrF, F1, perplexity, parameters, ...)."""
    source: str
    """The paper text file transcribed (and which version, for LMS-FD)."""
    notes: str = ""
    """Transcription doubts, reconstructions, cross-checks and inconsistencies found in the paper."""

    @property
    def paper_id(self) -> str:
        """Short paper name used in paths: one of :data:`PAPERS`."""
        return self.file.split("/", 1)[0]

    @property
    def number(self) -> str:
        """The table's number as in its file name (``"8"``, or ``"A1"`` for lettered appendix tables)."""
        return Path(self.file).stem.removeprefix("table")


def index(root: str | Path = ROOT) -> list[TableMeta]:
    """All entries of ``<root>/index.yaml``, in file order; raises :class:`DataError` on a malformed entry."""
    path = Path(root) / "index.yaml"
    return list(_index(path, path.stat().st_mtime_ns if path.exists() else 0))


@functools.lru_cache(maxsize=8)
def _index(path: Path, mtime_ns: int) -> tuple[TableMeta, ...]:
    """:func:`index`, read once per version of the file (the report looks every table up in it)."""
    try:
        doc = load_yaml(path)
    except ConfigError as exc:
        raise DataError(str(exc)) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("tables"), list):
        raise DataError(f"{path}: expected a mapping with a 'tables' list")
    names = {f.name for f in fields(TableMeta)}
    metas = []
    for i, entry in enumerate(doc["tables"]):
        where = f"{path}: tables[{i}]"
        if not isinstance(entry, dict):
            raise DataError(f"{where}: expected a mapping, got {type(entry).__name__}")
        unknown, missing = set(entry) - names, names - set(entry) - {"notes"}
        if unknown or missing:
            raise DataError(f"{where} ({entry.get('file')}): unknown fields {sorted(unknown)}, "
                            f"missing fields {sorted(missing)}")
        m = _FILE.fullmatch(str(entry["file"]))
        if not m or m["paper"] not in PAPERS:
            raise DataError(f"{where}: file {entry['file']!r} is not <paper>/table<N>.csv with paper in {PAPERS}")
        keys = entry["keys"]
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k for k in keys):
            raise DataError(f"{where} ({entry['file']}): keys must be a non-empty list of column names")
        metas.append(TableMeta(**{**entry, "keys": tuple(keys), "notes": entry.get("notes") or ""}))
    return tuple(metas)


def meta(paper: str, table: int | str, root: str | Path = ROOT) -> TableMeta:
    """The index entry of one table; ``table`` is its number (``8``, ``"8"``, ``"A1"``)."""
    file = f"{paper}/table{table}.csv"
    for m in index(root):
        if m.file == file:
            return m
    raise DataError(f"{Path(root) / 'index.yaml'}: no entry for {file}")


def load(paper: str, table: int | str, root: str | Path = ROOT) -> pd.DataFrame:
    """One table as a DataFrame of strings, key columns first, cells exactly as printed (``""`` when empty).

    Raises :class:`DataError` naming the file and line for a ragged row, a blank line, a bad or duplicate header,
    a duplicate key, or key columns that do not match the index.
    """
    info = meta(paper, table, root)
    path = Path(root) / info.file
    header, rows = _read_csv(path)
    if tuple(header[: len(info.keys)]) != info.keys:
        raise DataError(f"{path}:1: the first columns {header[: len(info.keys)]} are not the index keys "
                        f"{list(info.keys)}")
    seen: dict[tuple[str, ...], int] = {}
    for line, row in rows:
        key = tuple(row[: len(info.keys)])
        if key in seen:
            raise DataError(f"{path}:{line}: duplicate key {key} (first on line {seen[key]})")
        seen[key] = line
    df = pd.DataFrame([row for _, row in rows], columns=header, dtype=str)
    df.attrs["meta"] = info
    return df


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Header and (line number, cells) rows of a strict UTF-8 CSV: no blank lines, every row as wide as the header."""
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            reader = csv.reader(fh, strict=True)
            header = next(reader, None)
            if not header or any(not h.strip() for h in header):
                raise DataError(f"{path}:1: the header is missing or has an empty column name")
            if len(set(header)) != len(header):
                dup = sorted({h for h in header if header.count(h) > 1})
                raise DataError(f"{path}:1: duplicate column names {dup}")
            rows = []
            for cells in reader:
                line = reader.line_num
                if len(cells) != len(header):
                    what = "blank line" if not cells else f"{len(cells)} cells, the header has {len(header)}"
                    raise DataError(f"{path}:{line}: {what}")
                rows.append((line, cells))
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: invalid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except csv.Error as exc:
        raise DataError(f"{path}:{reader.line_num}: malformed CSV: {exc}") from None
    if not rows:
        raise DataError(f"{path}: no rows under the header")
    return header, rows


def number(cell: str) -> float | None:
    """The value of one printed cell, or ``None`` for an empty or dash-only cell.

    Strips trailing marks (:data:`MARKERS`), thousands separators (``3,324.45``), a leading ``+`` and reads a
    leading ``-`` or ``−`` (U+2212) as minus. Suffixes ``K``/``M``/``B`` scale by 10^3/10^6/10^9 (``76.96M`` ->
    76960000.0, ``10.5 B`` -> 1.05e10); ``%`` and ``x`` are dropped and the value kept as printed (``96%`` -> 96.0,
    since the papers print WR columns with and without the sign). Raises ``ValueError`` naming the cell for
    anything else, including compound cells such as ``15.28 (7.23)``: use :func:`numbers` for those.
    """
    s = cell.strip().rstrip(MARKERS).strip()
    if s in NOT_APPLICABLE:
        return None
    s = re.sub(r"(?<=\d),(?=\d{3}\b)", "", s.replace("\u2212", "-"))
    m = _NUMBER.fullmatch(s)
    if not m:
        raise ValueError(f"not a single printed number: {cell!r}")
    sign, digits, suffix = m.groups()
    value = float(digits) * _SCALE.get(suffix, 1.0)
    return -value if sign == "-" else value


def numbers(cell: str) -> list[float | None]:
    """All values of a compound cell: ``195.2 ± 2.6`` -> [195.2, 2.6], ``15.28 (7.23)`` -> [15.28, 7.23],
    ``15.23 (–)`` -> [15.23, None]; a simple cell gives a one-element list (see :func:`number`)."""
    s = cell.strip()
    if m := re.fullmatch(r"(.+?)\s*±\s*(.+)", s):
        return [number(m[1]), number(m[2])]
    if m := re.fullmatch(r"(.+?)\s*\((.*)\)", s):
        return [number(m[1]), number(m[2])]
    return [number(s)]
