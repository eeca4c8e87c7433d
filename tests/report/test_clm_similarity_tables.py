"""CLM Tables 5 and 8 from a fixture evaluate summary of ``opus100_clm_xxen`` (the xx-en models: Sec. 5.2 studies
encoder representations on xx-en) with similarity search (the format of
``lsnmt.eval.similarity.similarity_search``), and "not run" without it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lsnmt.eval.similarity import similarity_search
from lsnmt.experiment.params import Params
from lsnmt.io import write_json
from lsnmt.report import paper as paper_tables
from lsnmt.report.paper_table import Built, build
from lsnmt.report.runs import Results
from lsnmt.report.specs import BINDINGS
from lsnmt.report.specs.clm import FLORES, TED

ROOT = Path(__file__).resolve().parents[2]
GROUPS = {"am": "low", "be": "low", "af": "medium", "de": "high", "fr": "high"}


def embeddings(langs: list[str], noise: float, seed: int) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(20, 8))
    return {x: base + noise * rng.normal(size=base.shape) for x in langs}


@pytest.fixture(scope="module")
def params() -> Params:
    return Params.load(ROOT / "params.yaml")


def table(results: Results, number: int) -> Built:
    return build(paper_tables.meta("clm", number), paper_tables.load("clm", number),
                 BINDINGS[("clm", f"table{number}")], results)


def test_tables_5_and_8_read_the_similarity_search(tmp_path: Path, params: Params) -> None:
    langs = ["en", *GROUPS]
    sim = {m: {TED: similarity_search(embeddings(langs, noise, 1), "en"),
               FLORES: similarity_search(embeddings(langs, noise, 2), "en")}
           for m, noise in (("naive", 2.0), ("sclm", 0.5), ("mclm", 1.0))}
    summary = {"experiment": "opus100_clm_xxen", "methods": list(sim), "similarity": sim,
               "groups": {"source": "training sizes", "languages": GROUPS}, "scores": {}}
    write_json(tmp_path / "results" / "opus100_clm_xxen" / "evaluate" / "summary.json", summary)
    res = Results(params, tmp_path / "results", tmp_path / "none.csv")
    t5 = {(c.keys[0], c.column): c for c in table(res, 5).cells}
    got = t5[("sCLM", "Zero-Shot / Flores")]
    assert got.kind == "rate" and got.ours == pytest.approx(sim["sclm"][FLORES]["zero_shot"])
    assert t5[("Multilingual", "English-Centric / TED")].ours == pytest.approx(sim["naive"][TED]["english_centric"])
    t8 = {c.keys[0]: c for c in table(res, 8).cells}
    assert t8["Low"].ours == "am, be" and t8["High"].ours == "de, fr"

    none = Results(params, tmp_path / "nothing", tmp_path / "none.csv")
    assert {(c.keys[0], c.column): c for c in table(none, 5).cells}[("sCLM", "Zero-Shot / Flores")].ours is None
    assert {c.keys[0]: c for c in table(none, 8).cells}["Low"].ours is None
