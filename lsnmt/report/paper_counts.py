"""The papers' #params columns counted from params.yaml: the rows of ``reports/params.csv`` (``params`` stage).

``reports/paper/counts.yaml`` links each printed #params cell we reproduce (a row of
``reports/paper/<paper>/table<N>.csv``) to the params.yaml configuration that reproduces it: an experiment and one
of its ``method_cfg`` entries (``task_method_cfg`` for an XLM-R task), read through a ``route`` where the paper
prints one (FD-LS, LMS+FD-LS). Configurations are not typed twice: the one counted is the one the pipeline trains,
or, for the few the papers count but never train, a ``method_cfg`` entry the experiment's ``methods`` leave out;
the paper's figure is the printed cell. :func:`load` resolves every link into a :class:`PaperCount`, and
:func:`count` builds its model on the meta device (instant) and counts it with :mod:`models.param_count`:

* training parameters: every distinct parameter;
* inference parameters: those one direction uses (``direction``), or those deployed to serve every direction
  through the model's route (``deployed``: LMS-FD's "Inference" column, CLM's "Model Size");
* ``counts: extra``: both minus the experiment's naive model (LMS-FD Table 9).

The embedding rows are a counting choice of each paper, written in the links (``vocab``): the experiment's
sentencepiece vocabulary (LMS-FD), the fairseq dictionary built from it with one tag per language (CLM,
:func:`~models.param_count.fairseq_dict_size`), the pretrained encoder's (XLM-R) or the number the figures imply
(LSL: 240,000). A row whose stated configuration misses the paper by more than 2% (:data:`TOLERANCE`) carries the
configuration the figures imply (``implied_vocab``, or ``implied``: another ``method_cfg`` entry), or is marked
``miss`` with a note saying why no faithful reading reaches it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from torch import nn

from lsnmt.experiment.params import Experiment, Params
from lsnmt.io import DataError
from lsnmt.methods import resolve, resolve_task, with_route
from lsnmt.report import paper as paper_tables
from lsnmt.tasks.data import NER_LABELS
from lsnmt.typed import ConfigError, SafeName, build, load_yaml
from models.build import build_transformer
from models.config.model import ModelConfig
from models.meta import meta_device
from models.param_count import deployed_params, fairseq_dict_size, inference_params, train_params
from models.xlmr import count_meta

COUNTS = paper_tables.ROOT / "counts.yaml"
"""The links: which params.yaml configuration each printed #params cell counts, and how."""
_LABELS = ("paper", "table", "experiment", "method")
COLUMNS = (*_LABELS, "train_params", "inference_params", "paper_train_params", "paper_inference_params", "note")
"""The columns of ``reports/params.csv``."""
TOLERANCE = 0.02
"""A row reproduces the paper when both counts are within 2%."""

Vocab = Literal["spm", "fairseq", "encoder"] | int
Inference = Literal["direction", "deployed"]


@dataclass(frozen=True, kw_only=True)
class Link:
    """One row of a group in ``counts.yaml``: a printed row and the method counted for it."""

    row: str | tuple[str, ...]
    """The printed row: its first key column (unique in the table), or every key column."""
    method: SafeName
    """``naive`` or a ``method_cfg`` key of the experiment (``task_method_cfg`` with the group's ``task``)."""
    label: str
    """The row's ``method`` in ``reports/params.csv`` (what the report's bindings look up)."""
    route: str | None = None
    """The inference route the paper's row reads (FD-LS, LMS+FD-LS: ``ls``); ``None``: the configured one."""
    experiment: SafeName | None = None
    """Overrides the group's experiment (CLM's xx-en rows in an en-xx table)."""
    implied: SafeName | None = None
    """The ``method_cfg`` entry the paper's figures imply, counted beside the stated one."""
    miss: bool = False
    """No faithful reading reaches the paper within 2%; the note says exactly why."""
    note: tuple[str, ...] | None = None
    """Overrides the group's note keys."""


@dataclass(frozen=True, kw_only=True)
class Group:
    """Rows of one paper table that share an experiment and the way they are counted (``counts.yaml``)."""

    paper: str
    table: int
    experiment: SafeName
    label: str | None = None
    """The rows' ``experiment`` in ``reports/params.csv``; ``None``: the experiment's name."""
    task: SafeName | None = None
    """An XLM-R task of the experiment's ``task_cfg``: the rows count its model (``models.xlmr.count_meta``)."""
    vocab: Vocab = "spm"
    implied_vocab: int | None = None
    inference: Inference = "direction"
    counts: Literal["total", "extra"] = "total"
    note: tuple[str, ...] = ()
    rows: tuple[Link, ...]


@dataclass(frozen=True, kw_only=True)
class CountsFile:
    papers: dict[str, str]
    """``reports/paper/<paper>/`` -> the ``paper`` label of ``reports/params.csv``."""
    columns: dict[str, tuple[str, ...]]
    """``<paper>/table<N>`` -> its printed #params columns: (training, inference), or one for both."""
    groups: tuple[Group, ...]
    notes: dict[str, str]


@dataclass(frozen=True, kw_only=True)
class PaperCount:
    """One row of ``reports/params.csv`` before counting: the printed cell and the configuration counted for it."""

    paper: str
    table: str
    experiment: str
    method: str
    """The params.csv labels."""
    source: str
    """Where the configuration lives, e.g. ``experiments.iwslt14.method_cfg.lms_fd (route ls)``."""
    model: ModelConfig | None = None
    """The experiment's Transformer (the method's kind may reshape it); ``None`` for an XLM-R task row."""
    task: Literal["ner", "qa"] | None = None
    """The XLM-R task head (LMS-FD Tables 4-5); ``None`` for a Transformer row."""
    kind: str | None = None
    cfg: Any = None
    """The method's kind and typed config (``None``: the naive model)."""
    implied_cfg: Any = None
    vocab_size: int | None = None
    """Embedding rows; ``None``: the pretrained encoder's own (XLM-R)."""
    implied_vocab_size: int | None = None
    num_languages: int
    inference: Inference = "direction"
    counts: Literal["total", "extra"] = "total"
    paper_train_params: int
    paper_inference_params: int
    paper_unit: int
    """Rounding unit of the printed figures: 1M for ``48M``, 10K for ``76.96M``."""
    explained_miss: bool = False
    note: str


def load_file(path: Path = COUNTS) -> CountsFile:
    """``counts.yaml``, typed; :class:`~lsnmt.typed.ConfigError` names the file and the key at fault."""
    try:
        return build(CountsFile, load_yaml(path), "")
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None


def load(
    params: Params, path: Path = COUNTS, root: Path = paper_tables.ROOT, skipped: list[str] | None = None
) -> list[PaperCount]:
    """Every link of ``path`` resolved against ``params`` and the paper tables under ``root``, in file order.

    Raises :class:`~lsnmt.typed.ConfigError` (file and key path) for a link to an unknown experiment, method,
    task, note, paper or table, and :class:`~lsnmt.io.DataError` for a printed row that is not in the table. With a
    ``skipped`` list, a link to an experiment that ``params`` does not define (a trimmed params.yaml, e.g. the
    tests' tiny one) is not counted but named there (``groups[i].rows[j] (<paper> table <N>, experiment <e>)``).
    """
    links = load_file(path)
    out = []
    tables: dict[str, pd.DataFrame] = {}
    for i, group in enumerate(links.groups):
        name = f"{group.paper}/table{group.table}"
        for j, link in enumerate(group.rows):
            experiment = link.experiment or group.experiment
            if skipped is not None and experiment not in params.experiments:
                skipped.append(f"groups[{i}].rows[{j}] ({group.paper} table {group.table}, experiment {experiment})")
                continue
            try:
                if name not in tables:
                    tables[name] = paper_tables.load(group.paper, group.table, root)
                out.append(_resolve(links, group, link, params, tables[name]))
            except ConfigError as exc:
                raise ConfigError(f"{path}: groups[{i}].rows[{j}]: {exc}") from None
            except DataError as exc:
                raise DataError(f"{path}: groups[{i}].rows[{j}]: {exc}") from None
    return out


def _get(mapping: Any, key: str, what: str) -> Any:
    if key not in mapping:
        raise ConfigError(f"{what} {key!r} is not defined (known: {', '.join(mapping)})")
    return mapping[key]


def _resolve(links: CountsFile, group: Group, link: Link, params: Params, table: pd.DataFrame) -> PaperCount:
    exp = params.get(link.experiment or group.experiment)
    paper = _get(links.papers, group.paper, "paper")
    columns = _get(links.columns, f"{group.paper}/table{group.table}", "columns of table")
    note = " ".join(_get(links.notes, n, "note") for n in (group.note if link.note is None else link.note))
    train_cell, infer_cell = _cells(table, link, columns)
    task = None if group.task is None else _get(exp.task_cfg, group.task, f"task of experiments.{exp.name}")
    if task is not None:
        kind, cfg = resolve_task(exp.task_method_cfg, link.method, f"experiments.{exp.name}.task_method_cfg")
        source, langs, vocab = "task_method_cfg", len(task.languages), None
        if group.vocab != "encoder" or link.implied is not None:
            raise ConfigError("an XLM-R task row counts the encoder's vocabulary (vocab: encoder), no implied entry")
    else:
        kind, cfg = resolve(exp.method_cfg, link.method, f"experiments.{exp.name}.method_cfg")
        source, langs = "method_cfg", len(exp.data.languages)
        vocab = _vocab(group.vocab, exp, langs)
    implied_cfg = None
    if link.implied is not None:
        implied_kind, implied_cfg = resolve(exp.method_cfg, link.implied, f"experiments.{exp.name}.method_cfg")
        if implied_kind != kind:
            raise ConfigError(f"implied: {link.implied!r} is a {implied_kind} entry, {link.method!r} a {kind} one")
        implied_cfg = with_route(kind, implied_cfg, link.route)
    return PaperCount(
        paper=paper,
        table=str(group.table),
        experiment=group.label or exp.name,
        method=link.label,
        source=f"experiments.{exp.name}.{source}.{link.method}" + (f" (route {link.route})" if link.route else ""),
        model=None if task is not None else exp.model,
        task=None if task is None else task.kind,
        kind=kind,
        cfg=with_route(kind, cfg, link.route),
        implied_cfg=implied_cfg,
        vocab_size=vocab,
        implied_vocab_size=group.implied_vocab,
        num_languages=langs,
        inference=group.inference,
        counts=group.counts,
        paper_train_params=_int(train_cell),
        paper_inference_params=_int(infer_cell),
        paper_unit=_unit(train_cell),
        explained_miss=link.miss,
        note=note,
    )


def _vocab(vocab: Vocab, exp: Experiment, langs: int) -> int:
    if vocab == "encoder":
        raise ConfigError("vocab: 'encoder' is for XLM-R task rows (give `task`)")
    if vocab == "spm":
        return exp.spm.vocab_size
    return fairseq_dict_size(exp.spm.vocab_size, langs) if vocab == "fairseq" else vocab


def _cells(df: pd.DataFrame, link: Link, columns: tuple[str, ...]) -> tuple[str, str]:
    """The printed (training, inference) cells of ``link``'s row in the paper table ``df``."""
    name, keys = df.attrs["meta"].file, list(df.attrs["meta"].keys)
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise DataError(f"{name} has no column {missing[0]!r} (columns: {list(df.columns)})")
    want = (link.row,) if isinstance(link.row, str) else link.row
    hits = df[(df[keys[: len(want)]] == list(want)).all(axis=1)]
    if len(hits) != 1:
        raise DataError(f"row {list(want)} matches {len(hits)} rows of {name} (key columns {keys})")
    cells = [str(hits.iloc[0][c]) for c in columns]
    return cells[0], cells[-1]


def _int(cell: str) -> int:
    value = paper_tables.number(cell)
    if value is None:
        raise DataError(f"the printed cell {cell!r} has no number")
    return round(value)


def _unit(cell: str) -> int:
    """Rounding unit of a printed count in millions: ``48M`` -> 10^6, ``76.96M`` -> 10^4."""
    m = re.fullmatch(r"\s*\d+(?:\.(\d+))?M\s*", cell)
    if not m:
        raise DataError(f"the printed cell {cell!r} is not a count in millions (e.g. 48M, 76.96M)")
    return 10 ** (6 - len(m.group(1) or ""))


@dataclass(frozen=True, kw_only=True)
class ParamRow:
    """One counted row: ours beside the paper's (``reports/params.csv`` holds :data:`COLUMNS`)."""

    paper: str
    table: str
    experiment: str
    method: str
    train_params: int
    inference_params: int
    paper_train_params: int
    paper_inference_params: int
    note: str
    implied_train_params: int | None = None
    implied_inference_params: int | None = None

    def as_csv(self) -> dict[str, object]:
        return {c: getattr(self, c) for c in COLUMNS}


def within(count: int, paper: int, tolerance: float = TOLERANCE) -> bool:
    return abs(count - paper) <= tolerance * paper


# --- counting -------------------------------------------------------------------------------------------------------


def build_meta(row: PaperCount, vocab_size: int | None = None, cfg: Any = None) -> nn.Module:
    """The row's model (with its method, or ``cfg`` instead of the row's config) on the meta device (instant)."""
    vocab = vocab_size or row.vocab_size
    if row.task is not None:
        return count_meta(
            task=row.task,
            outputs=len(NER_LABELS) if row.task == "ner" else 2,
            num_languages=row.num_languages,
            method=row.kind,
            method_cfg=cfg or row.cfg,
            vocab_size=vocab,
        )
    assert row.model is not None and vocab is not None
    with meta_device():
        return build_transformer(
            row.model, vocab_size=vocab, num_languages=row.num_languages, method=row.kind, method_cfg=cfg or row.cfg
        )


def _model_counts(model: nn.Module, row: PaperCount) -> tuple[int, int]:
    if row.inference == "deployed":
        return train_params(model), deployed_params(model, row.num_languages)
    return train_params(model), inference_params(model, 0, 1)


def counts(row: PaperCount, vocab_size: int | None = None, cfg: Any = None) -> tuple[int, int]:
    """(training, inference) parameters of ``row``'s model (with another vocabulary or config if given)."""
    train, infer = _model_counts(build_meta(row, vocab_size, cfg), row)
    if row.counts == "extra":
        base = _model_counts(build_meta(replace(row, kind=None, cfg=None), vocab_size), row)
        train, infer = train - base[0], infer - base[1]
    return train, infer


def count(row: PaperCount) -> ParamRow:
    """The params.csv row of ``row``: our counts beside the paper's, and the implied configuration's."""
    train, infer = counts(row)
    implied: tuple[int | None, int | None] = (None, None)
    if row.implied_vocab_size or row.implied_cfg is not None:
        implied = counts(row, row.implied_vocab_size, row.implied_cfg)
    return ParamRow(
        paper=row.paper,
        table=row.table,
        experiment=row.experiment,
        method=row.method,
        train_params=train,
        inference_params=infer,
        paper_train_params=row.paper_train_params,
        paper_inference_params=row.paper_inference_params,
        note=row.note,
        implied_train_params=implied[0],
        implied_inference_params=implied[1],
    )


def implied_rows(row: PaperCount, paper: int, inference: bool = False) -> tuple[int, int]:
    """Range of embedding-table rows whose count rounds to ``paper`` at the paper's precision.

    The count is affine in the vocabulary size with slope ``embed_dim`` (one shared table).
    """
    assert row.vocab_size is not None
    c0, c1 = (counts(row, v)[int(inference)] for v in (row.vocab_size, row.vocab_size + 1))
    slope, fixed = c1 - c0, c0 - (c1 - c0) * row.vocab_size
    lo, hi = paper - row.paper_unit / 2, paper + row.paper_unit / 2
    return -(-int(lo - fixed) // slope), int(hi - fixed - 1) // slope


def param_table(params: Params, path: Path = COUNTS, skipped: list[str] | None = None) -> list[ParamRow]:
    """Every row of ``reports/params.csv``: the links of ``path`` resolved against ``params`` and counted (with a
    ``skipped`` list, links to experiments ``params`` lacks are named there instead: :func:`load`)."""
    return [count(r) for r in load(params, path, skipped=skipped)]


def _m(n: int | None) -> str:
    return "-" if n is None else f"{n / 1e6:.2f}M"


def _dev(n: int, paper: int) -> str:
    return f"{100 * (n - paper) / paper:+.1f}%"


def format_table(rows: list[ParamRow]) -> str:
    """Fixed-width table (counts in millions, deviation from the paper) and the notes, each once."""
    notes = list(dict.fromkeys(r.note for r in rows if r.note))
    head = (*_LABELS, "train", "paper", "dev", "infer", "paper", "dev", "implied train/infer", "note")
    body = [
        (
            r.paper,
            r.table,
            r.experiment,
            r.method,
            _m(r.train_params),
            _m(r.paper_train_params),
            _dev(r.train_params, r.paper_train_params),
            _m(r.inference_params),
            _m(r.paper_inference_params),
            _dev(r.inference_params, r.paper_inference_params),
            "-" if r.implied_train_params is None else f"{_m(r.implied_train_params)}/{_m(r.implied_inference_params)}",
            f"[{notes.index(r.note) + 1}]" if r.note else "",
        )
        for r in rows
    ]
    widths = [max(len(x[c]) for x in [head, *body]) for c in range(len(head))]
    lines = ["  ".join(x[c].ljust(widths[c]) for c in range(len(head))).rstrip() for x in [head, *body]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join([*lines, "", *(f"[{i}] {n}" for i, n in enumerate(notes, 1))])
