"""One layer per folder, dependencies one way (issue 41, item 2): the import graph of ``lsnmt``, ``models`` and
``stages`` against :data:`lsnmt.graph.layers.LAYERS`. A *climb* is a pair of parts (folders) where the lower one
imports the higher one; a *ring* a pair that import each other; a cycle any set of parts importing one another
around (:mod:`lsnmt.graph.layers`). Issue 41 counted 18 climbs and 7 rings on main (its definition unwritten);
this one reads 9 climbs (13 imports) and 7 rings on df1c1eb, 5 climbs (8 imports) and 5 rings after the folders'
moves, every one an import of the params.yaml schema in ``lsnmt``'s root; none once the sections moved to the
folders that read them and the whole params.yaml above them, ``lsnmt/experiment`` (``python -m
lsnmt.graph.layers``)."""

from __future__ import annotations

from pathlib import Path

from lsnmt.graph import layers


def test_no_climb_ring_or_cycle() -> None:
    """Every part imports only the parts below it: no climb, so no ring and no cycle either (each counted on its
    own, so that a failure says which)."""
    pairs = layers.imports()
    assert layers.climbing_imports(pairs) == [], layers.climbing_imports(pairs)
    assert layers.climbs(pairs) == [], layers.climbs(pairs)
    assert layers.rings(pairs) == [], layers.rings(pairs)
    assert layers.cycles(pairs) == [], layers.cycles(pairs)


def test_the_whole_params_sits_above_the_sections_it_composes() -> None:
    """``lsnmt/experiment`` (``Experiment``, ``Params``, the JSON Schema) imports the sections of the folders below
    it, and no folder it composes imports it back (issue 41: each section lives with the stages that read it)."""
    pairs = layers.imports()
    composed = {layers.part_of(b) for a, b in pairs if layers.part_of(a) == "lsnmt/experiment"}
    assert {
        "lsnmt/data",
        "lsnmt/train",
        "lsnmt/decode",
        "lsnmt/eval",
        "lsnmt/claim",
        "lsnmt/tasks",
        "lsnmt/xelm",
        "models/config",
    } <= composed, composed
    users = {layers.part_of(a) for a, b in pairs if layers.part_of(b) == "lsnmt/experiment"}
    assert not users & composed, users & composed


def test_every_folder_has_one_layer() -> None:
    """Every module's part is in :data:`LAYERS` once, and every part there exists."""
    parts = {layers.part_of(f) for f in layers.sources()}
    assert parts == set(layers.LAYERS), sorted(parts ^ set(layers.LAYERS))
    assert len(layers.LAYERS) == len(set(layers.LAYERS))
    assert [layers.part_of(f) for f in ("lsnmt/cli.py", "lsnmt/__main__.py", "lsnmt/view.py")] == [
        "lsnmt/cli",
        "lsnmt/cli",
        "lsnmt",
    ]  # the lsnmt command is an entry point on top; the root's other modules the bottom


TYPE_ONLY = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from stages import report\n"


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def test_climbs_rings_and_cycles_of_a_small_tree(tmp_path: Path) -> None:
    """data imports tasks (a climb; tasks imports data back: a ring); train imports eval, eval decode, decode train
    (a cycle of three, no ring); a function-local import counts, one under ``if TYPE_CHECKING:`` does not."""
    root = _tree(
        tmp_path,
        {
            "lsnmt/__init__.py": "",
            "lsnmt/typed.py": "",
            "lsnmt/data/__init__.py": "",
            "lsnmt/data/config.py": "from lsnmt.tasks import config\nimport lsnmt.typed\n",
            "lsnmt/data/sources/__init__.py": "from lsnmt.data import config\n",
            "lsnmt/tasks/__init__.py": "",
            "lsnmt/tasks/config.py": "from lsnmt.data.config import X\n",
            "lsnmt/train/__init__.py": "",
            "lsnmt/train/loop.py": "def f():\n    from lsnmt.eval import tsne\n",
            "lsnmt/eval/__init__.py": "",
            "lsnmt/eval/tsne.py": "from lsnmt.decode.beam import beam_search\n",
            "lsnmt/decode/__init__.py": "",
            "lsnmt/decode/beam.py": "from lsnmt.train import loop\n",
            "lsnmt/report/__init__.py": "",
            "lsnmt/report/build.py": TYPE_ONLY,
            "stages/__init__.py": "",
            "stages/report.py": "",
        },
    )
    pairs = layers.imports(root)
    assert ("lsnmt/data/sources/__init__.py", "lsnmt/data/config.py") not in pairs  # one part: data
    assert layers.climbs(pairs) == [("lsnmt/data", "lsnmt/tasks"), ("lsnmt/train", "lsnmt/eval")]
    assert layers.climbing_imports(pairs) == [
        ("lsnmt/data/config.py", "lsnmt/tasks/config.py"),
        ("lsnmt/train/loop.py", "lsnmt/eval/tsne.py"),
    ]
    assert layers.rings(pairs) == [("lsnmt/data", "lsnmt/tasks")]
    assert layers.cycles(pairs) == [("lsnmt/data", "lsnmt/tasks"), ("lsnmt/decode", "lsnmt/eval", "lsnmt/train")]
