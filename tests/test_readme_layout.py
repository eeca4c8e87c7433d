"""README.md's layout section is drawn from the code (issue 41, item 5): every file and folder it names exists, every
package and every module at ``lsnmt``'s root is named, and the code's folders come in their layers' order, top first
(:data:`lsnmt.graph.layers.LAYERS`)."""

from __future__ import annotations

import re

from lsnmt.graph.imports import PACKAGES, ROOT
from lsnmt.graph.layers import LAYERS

PATH = re.compile(r"[\w.-]+(/[\w.-]+)*/?")
FILE = re.compile(r".*\.(py|yaml|sh|md|txt|tsv|toml)$")


def layout(readme: str) -> list[tuple[str, list[str]]]:
    """``(leading name, every path-like name)`` per line of the section's code block; a line that starts with spaces
    continues the line above (its names count under that line's leading name)."""
    section = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    block = section.split("```\n", 2)[1]
    lines: list[tuple[str, list[str]]] = []
    for line in block.splitlines():
        names = [
            t
            for w in line.split()
            if PATH.fullmatch(t := w.strip("(),;:")) and ("/" in t or FILE.match(t) or t == "Snakefile")
        ]
        if line.startswith(" ") and lines:
            lines[-1][1].extend(names)
        elif names:
            lines.append((line.split()[0], names))
    return lines


def _exists(name: str, lead: str) -> bool:
    """``name`` from the repository's root, or inside the line's leading folder."""
    bases = [ROOT] + ([ROOT / lead] if lead.endswith("/") else [])
    return any((base / name).exists() for base in bases)


def _named(readme: str) -> set[str]:
    """Every path the section names, relative to the repository (``/`` ending a folder dropped)."""
    out = set()
    for lead, names in layout(readme):
        for name in names:
            inside = ROOT / lead / name
            path = inside if lead.endswith("/") and name != lead and inside.exists() else ROOT / name
            out.add(path.relative_to(ROOT).as_posix())
    return out


def _readme() -> str:
    return (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_name_in_the_layout_exists() -> None:
    missing = [(lead, n) for lead, names in layout(_readme()) for n in names if not _exists(n, lead)]
    assert not missing, f"README.md's layout names what is not there: {missing}"


def test_every_package_and_root_module_is_named() -> None:
    named = _named(_readme())
    packages = {p.parent.relative_to(ROOT).as_posix() for pkg in PACKAGES for p in (ROOT / pkg).rglob("__init__.py")}
    root = {p.relative_to(ROOT).as_posix() for p in (ROOT / "lsnmt").glob("*.py") if p.name != "__init__.py"}
    assert not packages - named, f"packages README.md's layout leaves out: {sorted(packages - named)}"
    assert not root - named, f"modules at lsnmt's root README.md's layout leaves out: {sorted(root - named)}"


def test_the_folders_come_in_their_layers_order() -> None:
    """The parts that are folders (the ``lsnmt`` command's part is two root files: :data:`layers.COMMAND`)."""
    leads = [lead.rstrip("/") for lead, _ in layout(_readme())]
    assert [lead for lead in leads if lead in LAYERS] == [p for p in reversed(LAYERS) if (ROOT / p).is_dir()]


def test_a_missing_folder_or_package_is_caught() -> None:
    """The checks see a renamed folder and an unnamed package (the section as today's README draws it, altered)."""
    readme = _readme().replace("lsnmt/decode/", "lsnmt/decoding/", 1)
    assert ("lsnmt/decoding/", ["lsnmt/decoding/"]) in layout(readme)
    assert not _exists("lsnmt/decoding/", "lsnmt/decoding/")
    assert "lsnmt/decode" not in _named(readme)
