"""The whole evaluate step on a tiny experiment: per-direction JSON, summary, figures, determinism."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from lsnmt.decode import translate
from lsnmt.eval import analyses
from lsnmt.eval.summary import evaluate
from tests.eval.helpers import MAX_SENTENCES, experiment, make_world, write

METHODS = ("naive", "good")


@pytest.fixture(autouse=True)
def any_method_loads_as_naive(monkeypatch: pytest.MonkeyPatch) -> None:
    """No language-specific method is registered yet: build every method's model as the naive one."""
    def load(method, path, vocab, route=None, top_w=None, **where) -> torch.nn.Module:
        return translate.load_model("naive", path, vocab, **where)

    monkeypatch.setattr(analyses, "load_model", load)


def run(tmp_path: Path, out: str = "evaluate", data: dict | None = None, methods: tuple = METHODS,
        **cfg: object) -> tuple[dict, Path]:
    exp = experiment(data, **{"similarity_sets": ["ntrex"], "tsne_sets": ["ntrex"], "multiway_max_sentences": 20,
                              "tsne_perplexity": 5.0, **cfg})
    root = tmp_path / "world"
    if not root.exists():
        make_world(root, exp, METHODS)
    summary = evaluate(exp, exp.name, methods, root / "results", root / "prepared", root / "spm", root / "bin",
                       tmp_path / out)
    return summary, tmp_path / out


def test_outputs_and_summary(tmp_path: Path) -> None:
    summary, out = run(tmp_path)
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    directions = ["de-en", "en-de", "en-fr", "fr-en"]
    assert files == sorted([f"{m}/{d}.json" for m in METHODS for d in directions] +
                           ["summary.json", "summary.md", "figures/tsne-naive-ntrex.png",
                            "figures/tsne-naive-ntrex.pdf", "figures/tsne-good-ntrex.png",
                            "figures/tsne-good-ntrex.pdf"])
    rec = json.loads((out / "naive" / "en-de.json").read_text())
    assert rec["sentences"] == MAX_SENTENCES and rec["scores"]["chrf"]["signature"].startswith("nrefs:1|case:mixed")
    assert rec["offtarget"]["supported"] and rec["offtarget"]["tgt"] == "de"
    assert json.loads((out / "summary.json").read_text()) == json.loads(json.dumps(summary))

    assert summary["scores"]["good"]["bleu"]["averages"]["all"] == pytest.approx(100.0)
    assert summary["scores"]["naive"]["bleu"]["averages"]["all"] < 50
    assert summary["win_ratio"]["good"]["chrf"] == {"en-xx": 100.0, "xx-en": 100.0, "all": 100.0}
    assert summary["significance"]["good"]["chrf"]["outcomes"] == {"better": 4, "worse": 0, "not_significant": 0,
                                                                   "degenerate": 0}
    assert summary["degenerate"]["systems"] == summary["degenerate"]["pairs"] == {}
    assert "naive" not in summary["significance"]
    assert summary["groups"]["languages"] == {"de": "high", "fr": "low"}
    assert summary["scores"]["good"]["chrf"]["groups"]["en-xx"] == {"high": 100.0, "low": 100.0}
    off = summary["offtarget"]
    assert off["scope"] == "en-xx" and "no zero-shot direction" in off["note"]
    assert off["methods"]["good"]["overall"]["rate"] == off["methods"]["good"]["overall"]["reference_rate"]
    sim = summary["similarity"]["naive"]["ntrex"]
    assert sim["sentences"] == 20 and set(sim["languages"]) == {"en", "de", "fr"}
    assert summary["cost"]["naive"]["train_params"] > 0
    assert "| good |" in (out / "summary.md").read_text()


def test_deterministic(tmp_path: Path) -> None:
    _, a = run(tmp_path, "a", methods=("naive",))
    _, b = run(tmp_path, "b", methods=("naive",))
    for rel in ("summary.json", "summary.md", "naive/en-fr.json", "figures/tsne-naive-ntrex.png"):
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_zero_shot_directions_and_missing_baseline(tmp_path: Path) -> None:
    summary, _ = run(tmp_path, data={"eval_directions": "all"}, methods=("good",), similarity_sets=[],
                     tsne_sets=[])
    off = summary["offtarget"]
    assert off["scope"] == "zero-shot" and off["directions"] == ["de-fr", "fr-de"] and not off["note"]
    assert summary["baseline"] is None and summary["significance"] == {} and "baseline_note" in summary
    assert summary["direction_sets"]["zero-shot"] == ["de-fr", "fr-de"]


def test_a_two_route_method_is_two_systems(tmp_path: Path) -> None:
    """FD is trained and translated once; its LS route's hypotheses (``translate/fd/ls``) are scored as ``fd_ls``."""
    exp = experiment(similarity_sets=[], tsne_sets=[])
    w = make_world(tmp_path / "world", exp, ("naive", "good", "fd"))
    for s, t in exp.data.eval_pairs:  # the LS route: the references (good), the shared route: corrupted
        write(w.results / "translate" / "fd" / "ls" / f"{s}-{t}.hyp",
              (w.results / "translate" / "good" / f"{s}-{t}.hyp").read_text().splitlines())
    summary = evaluate(exp, exp.name, ("naive", "fd"), w.results, w.prepared, w.spm, w.bin, tmp_path / "out")
    assert summary["methods"] == ["naive", "fd", "fd_ls"]
    assert summary["scores"]["fd_ls"]["bleu"]["averages"]["all"] == pytest.approx(100.0)
    assert summary["scores"]["fd"]["bleu"]["averages"]["all"] < 50
    assert set(summary["significance"]) == set(summary["cost"]) - {"naive"} == {"fd", "fd_ls"}
    assert (tmp_path / "out" / "fd_ls" / "en-de.json").is_file()
