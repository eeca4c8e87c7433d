"""``reports/index.html``: the one page to open after a run.

It opens with the answer (:mod:`lsnmt.report.headline`: the scale, each system against naive, the small-scale
claim with its sources; the Markdown that ``reports/README.md`` opens with, its links to an item's files turned
into links to that item's section here), then the selected experiment's evaluation
(``results/{exp}/evaluate/summary.md``: per test set and metric the papers' averages, the win ratio and the
paired-bootstrap significance counts against the baseline, degenerate output marked), then every paper's tables
and figures inline, in the order of ``reports/README.md``: each item's Markdown table rendered as HTML, each PNG
shown (once), and links to every file
(Markdown, LaTeX, CSV, PDF).
Nothing is computed here: the page renders what the report stage and the evaluate stage wrote, so it always agrees
with ``reports/README.md`` and the files it links. Headings inside an embedded file are shifted below the page's
own, and its relative links and images are rebased onto ``reports/``.
"""

from __future__ import annotations

import html
import os
import posixpath
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path, PurePosixPath

from markdown_it import MarkdownIt
from markdown_it.token import Token

from lsnmt.io import atomic_write
from lsnmt.report.headline import headline_md
from lsnmt.report.item import Item, anchor
from lsnmt.report.runs import Results, describe

HERE = PurePosixPath(".")
"""``reports/`` itself, as the folder of a file it holds."""
IMAGES = (".png", ".svg", ".jpg", ".jpeg", ".gif")
"""Linked files shown inline as images (a figure's PDF twin is linked only)."""

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1200px; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
.item { margin: 1.5em 0; padding-top: .5em; border-top: 1px dotted #ccc; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: .6em 0; font-size: 12.5px; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; }
img { max-width: 100%; border: 1px solid #eee; }
code { background: #f5f5f5; padding: 0 2px; }
.status { font-size: .8em; padding: 1px 6px; border-radius: 3px; margin-left: .5em; color: #fff; }
.reproduced { background: #2e7d32; } .differs { background: #c62828; } .not-run { background: #757575; }
.params-differ { background: #ef6c00; }
.ours { background: #1565c0; }
.files, .caption { color: #555; }
.answer h2 + p { background: #fff8e1; padding: .4em .6em; border-left: 4px solid #f9a825; }
.answer table { font-size: 13.5px; } .answer li { margin: .2em 0; }
.curves { display: flex; flex-wrap: wrap; gap: .5em; } .curves figure { margin: 0; width: 380px; }
"""


@cache
def _md() -> MarkdownIt:
    """CommonMark with GitHub's tables; raw HTML in a file is shown as text, never interpreted."""
    return MarkdownIt("commonmark", {"html": False}).enable("table")


def rebase(url: str, base: PurePosixPath) -> str:
    """``url`` written in a file of folder ``base`` (relative to ``reports/``), as seen from ``reports/``: absolute
    URLs, absolute paths and anchors unchanged."""
    if not url or url.startswith(("#", "/")) or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url):
        return url
    return posixpath.normpath(posixpath.join(base.as_posix(), url))


def _rebase_tokens(tokens: Iterable[Token], base: PurePosixPath, shift: int) -> None:
    for tok in tokens:
        if tok.type in ("heading_open", "heading_close"):
            tok.tag = f"h{min(6, int(tok.tag[1]) + shift)}"
        for attr in ("href", "src"):
            value = tok.attrGet(attr)
            if isinstance(value, str):
                tok.attrSet(attr, rebase(value, base))
        if tok.children:
            _rebase_tokens(tok.children, base, shift)


def md_html(text: str, base: PurePosixPath = HERE, shift: int = 0) -> str:
    """Markdown as the report writes it -> HTML, headings ``shift`` levels lower, links rebased from ``base``."""
    md = _md()
    tokens = md.parse(text)
    _rebase_tokens(tokens, base, shift)
    return md.renderer.render(tokens, md.options, {})


def _status(status: str) -> str:
    return f'<span class="status {anchor(status)}">{html.escape(status)}</span>'


def item_html(item: Item, out: Path) -> str:
    """One index item: heading with its status, caption, its Markdown tables and images inline, its files."""
    parts = [
        f'<section class="item" id="{item.id}">',
        f"<h3>{html.escape(item.label)}{_status(item.status)}</h3>",
    ]
    if item.detail:
        parts.append(f'<p class="files">{html.escape(item.detail)}</p>')
    shown = False
    for link in item.links:
        rel = PurePosixPath(link)
        if rel.suffix == ".md" and (out / rel).is_file():
            parts.append(f'<div class="scroll">{md_html((out / rel).read_text(encoding="utf-8"), rel.parent, 3)}</div>')
            shown = True
        elif rel.suffix.lower() in IMAGES and f'src="{html.escape(link)}"' not in "".join(parts):
            parts.append(f'<figure><img src="{html.escape(link)}" alt="{html.escape(item.label)}"></figure>')
            shown = True
    if item.caption and not shown:
        parts.append(f'<p class="caption">{html.escape(item.caption)}</p>')
    files = " ".join(
        f'<a href="{html.escape(link)}">{html.escape(PurePosixPath(link).name)}</a>' for link in item.links
    )
    parts += [f'<p class="files">Files: {files or "none"}</p>', "</section>"]
    return "\n".join(parts)


def answer_html(results: Results, items: list[Item], logs: Path) -> str:
    """The answer's Markdown (:func:`lsnmt.report.headline.headline_md`) as the page's first section; a link to
    one of an item's files goes to that item's section below (:attr:`Item.id`, the id the section carries)."""
    text = md_html(headline_md(results, logs))
    for item in items:
        for link in item.links:
            text = text.replace(f'href="{html.escape(link)}"', f'href="#{item.id}"')
    return f'<section id="answer" class="answer">\n{text}</section>'


def results_html(results: Results, out: Path) -> str:
    """The selected experiment's evaluation summary, with links to its files; "not run" when it is absent."""
    exp = results.params.get()
    folder = results.results_dir / exp.name / "evaluate"
    rel = PurePosixPath(Path(os.path.relpath(folder, out)).as_posix())
    parts = [
        f'<h2 id="results">Results of experiment <code>{html.escape(exp.name)}</code></h2>',
        md_html(describe(exp) + "."),
    ]
    summary = folder / "summary.md"
    if not summary.is_file():
        return "\n".join(
            [
                *parts,
                f"<p>not run: <code>{html.escape(str(summary))}</code> does not exist (run the "
                "<code>evaluate</code> stage).</p>",
            ]
        )
    links = " ".join(
        f'<a href="{rel / name}">{name}</a>' for name in ("summary.md", "summary.json") if (folder / name).is_file()
    )
    return "\n".join(
        [
            *parts,
            f'<div class="scroll">{md_html(summary.read_text(encoding="utf-8"), rel, 2)}</div>',
            f'<p class="files">Files: {links}</p>',
        ]
    )


def curves_html(results: Results, out: Path) -> str:
    """The selected experiment's training curves, one image per trained method (``curve.png``, drawn by the train
    stage: ``lsnmt/train/curve_plot.py``), linked from ``results/`` beside its data; empty when none was drawn."""
    exp = results.params.get()
    shown = []
    for method in results.params.methods_of(exp.name):
        folder = results.results_dir / exp.name / "train" / method
        if not (folder / "curve.png").is_file():
            continue
        rel = PurePosixPath(Path(os.path.relpath(folder, out)).as_posix())
        shown.append(
            f'<figure><img src="{rel / "curve.png"}" alt="training curve of {html.escape(method)}">'
            f'<figcaption class="files">{html.escape(method)}: <a href="{rel / "curve.tsv"}">curve.tsv'
            "</a></figcaption></figure>"
        )
    if not shown:
        return ""
    return "\n".join(['<h3 id="curves">Training curves</h3>', '<div class="curves">', *shown, "</div>"])


def page(items: list[Item], results: Results, out: Path, papers: dict[str, str], logs: Path = Path("logs")) -> str:
    """The whole page: the answer (:mod:`lsnmt.report.headline`) on the first screen, then the selected
    experiment's evaluation, then each paper's items (``papers``: id -> title)."""
    exp = results.params.get()
    sections = [(anchor("paper", key), name, [it for it in items if it.paper == key]) for key, name in papers.items()]
    sections = [s for s in sections if s[2]]
    toc = "".join(
        f'<li><a href="#{sid}">{html.escape(name)}</a> ({len(mine)} items)</li>' for sid, name, mine in sections
    )
    body = [
        f"<h1>lsnmt: results of <code>{html.escape(exp.name)}</code></h1>",
        answer_html(results, items, logs),
        "<h2>The rest of this page</h2>",
        "<p>Generated by the <code>report</code> stage (<code>python -m stages.report</code>) from the files it "
        'links; the same items as <a href="README.md">README.md</a>, with tables and figures inline. Each '
        'paper table shows the paper\'s value as printed, ours at paper scale and the difference; "not run" '
        "means that experiment has not run here. The embedded default run fills its own, separately labelled "
        "cells: a tiny model, not comparable with the papers.</p>",
        f'<ul><li><a href="#results">Evaluation of <code>{html.escape(exp.name)}</code></a></li>{toc}</ul>',
        results_html(results, out),
        curves_html(results, out),
    ]
    for sid, name, mine in sections:
        body.append(f'<h2 id="{sid}">{html.escape(name)}</h2>')
        body += [item_html(it, out) for it in mine]
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>lsnmt: results of {html.escape(exp.name)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body)
        + "\n</body>\n</html>\n"
    )


def write_page(
    items: list[Item], results: Results, out: Path, papers: dict[str, str], logs: Path = Path("logs")
) -> Path:
    """Write ``out/index.html`` atomically; return its path."""
    path = out / "index.html"
    with atomic_write(path) as fh:
        fh.write(page(items, results, out, papers, logs))
    return path
