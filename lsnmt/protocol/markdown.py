"""Markdown tables of PROTOCOL.md."""

from __future__ import annotations

from collections.abc import Sequence


def table(head: tuple[str, ...], body: Sequence[tuple[str, ...]]) -> list[str]:
    """A Markdown table (a ``|`` inside a cell escaped)."""
    def row(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return [row(head), "| " + " | ".join("---" for _ in head) + " |", *map(row, body)]
