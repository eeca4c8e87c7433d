"""Small builders for data tests: an Experiment from a dict, and a raw layout from lists of lines."""

from __future__ import annotations

from pathlib import Path

from lsnmt.data import layout
from lsnmt.experiment.params import Experiment
from lsnmt.typed import build


def experiment(languages=("en", "de", "fr"), **sections) -> Experiment:
    data = {"languages": list(languages), "sources": [
        {"name": "bitext", "kind": "embedded", "splits": ["train"]},
        {"name": "mw", "kind": "embedded", "splits": ["valid", "test"]},
    ]}
    data.update(sections.pop("data", {}))
    return build(Experiment, {"name": "t", "data": data, **sections}, "")


def write_lines(path: Path, lines: list[str] | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(lines if isinstance(lines, bytes) else "".join(x + "\n" for x in lines).encode())
    return path


def raw_corpus(root: Path, pairs: dict[str, tuple[list[str], list[str]]], eval_langs: dict[str, list[str]]) -> Path:
    """Write train bitext ``{"en-de": (en_lines, de_lines)}`` and multi-way valid/test files."""
    for pair, (a_lines, b_lines) in pairs.items():
        a, b = pair.split("-")
        fa, fb = layout.bitext(root, "train", "bitext", a, b)
        write_lines(fa, a_lines)
        write_lines(fb, b_lines)
    for split in ("valid", "test"):
        for lang, lines in eval_langs.items():
            write_lines(layout.multiway(root, split, "mw", lang), lines)
    return root
