"""Language and corpus tags: the symbols, and where they go in a source sentence.

Two language symbols per language: ``<2de>`` says "translate into German",
``<de>`` says "this is German". The tag style (``data.tags``) places them:

=============================  ===========================================  =========================
style                          source line                                   papers
=============================  ===========================================  =========================
``target-prefix``              ``<2de> x``                                   LMS-FD App. A, CLM en-xx
``source-prefix``              ``<en> x``                                    CLM xx-en
``en-xx-target-xx-en-source``  ``<2de> x`` for en-de, ``<de> x`` for de-en  CLM (both settings at once)
``src-tgt-suffix``             ``x <en> <2de>``                              LSL (tags appended)
``none``                       ``x``                                         monolingual LMs
=============================  ===========================================  =========================

A corpus tag (``<HQ>``) goes first, before everything else.
"""

from __future__ import annotations

from collections.abc import Iterable

from lsnmt.data.config import TagStyle


def target_tag(lang: str) -> str:
    return f"<2{lang}>"


def source_tag(lang: str) -> str:
    return f"<{lang}>"


def lang_symbols(langs: Iterable[str]) -> list[str]:
    """Every language symbol the sentencepiece model must keep whole."""
    langs = list(langs)
    return [target_tag(x) for x in langs] + [source_tag(x) for x in langs]


def tag_tokens(style: TagStyle, src: str, tgt: str, pivot: str = "en") -> tuple[list[str], list[str]]:
    """(prefix, suffix) tokens that the style puts around a ``src``->``tgt`` source sentence."""
    if style == "target-prefix":
        return [target_tag(tgt)], []
    if style == "source-prefix":
        return [source_tag(src)], []
    if style == "en-xx-target-xx-en-source":
        return ([target_tag(tgt)], []) if src == pivot else ([source_tag(src)], [])
    if style == "src-tgt-suffix":
        return [], [source_tag(src), target_tag(tgt)]
    return [], []


def add_tags(line: str, prefix: list[str], suffix: list[str], corpus_tag: str | None = None) -> str:
    head = ([corpus_tag] if corpus_tag else []) + prefix
    return " ".join([*head, line, *suffix])


def strip_tags(line: str, prefix: list[str], suffix: list[str], corpus_tag: str | None = None) -> str:
    """Exact inverse of :func:`add_tags` for the same tokens."""
    head = " ".join(([corpus_tag] if corpus_tag else []) + prefix)
    tail = " ".join(suffix)
    if head:
        line = line.removeprefix(head + " ")
    if tail:
        line = line.removesuffix(" " + tail)
    return line
