"""One line of the report index: what was generated, its status and its files."""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    paper: str
    """``lmsfd``, ``clm``, ``lsl``, ``xelm`` or ``ours``."""
    label: str
    status: str
    """``reproduced``, ``differs``, ``not run``, or ``ours`` (a table of our own with no paper value)."""
    links: tuple[str, ...]
    """Files relative to ``reports/``."""
    caption: str
    detail: str = ""
    """What the status rests on (compared cells per kind)."""

    @property
    def id(self) -> str:
        """The item's section id on ``index.html``; every link to the item uses it."""
        return anchor(self.paper, self.label)


def anchor(*parts: str) -> str:
    """An HTML id from ``parts``: lower-case letters, digits and ``-`` (the page's ids, ``lsnmt/report/html.py``)."""
    return re.sub(r"[^a-z0-9]+", "-", " ".join(parts).lower()).strip("-")
