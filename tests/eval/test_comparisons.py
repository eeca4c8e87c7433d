"""Significance of the comparisons a paper prints besides the baseline's (``evaluate.comparisons``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from lsnmt.decode import translate
from lsnmt.eval import analyses
from lsnmt.eval.summary import evaluate
from lsnmt.typed import ConfigError
from tests.eval.helpers import experiment, make_world


@pytest.fixture(autouse=True)
def any_method_loads_as_naive(monkeypatch: pytest.MonkeyPatch) -> None:
    def load(method, path, vocab, route=None, top_w=None, **where) -> torch.nn.Module:
        return translate.load_model("naive", path, vocab, **where)

    monkeypatch.setattr(analyses, "load_model", load)


def test_each_configured_comparison_is_tested_on_every_direction(tmp_path: Path) -> None:
    """``naive`` against ``good`` (a reference other than the baseline: LSL compares LSL-NAS with the best
    adapters too) is a paired bootstrap per direction and metric, like the baseline's; a comparison with a system
    this run did not evaluate says so instead of vanishing."""
    exp = experiment(comparisons=[["naive", "good"], ["good", "fd_ls"]], similarity_sets=[], tsne_sets=[])
    make_world(tmp_path / "w", exp, ("naive", "good"))
    root = tmp_path / "w"
    summary = evaluate(exp, exp.name, ("naive", "good"), root / "results", root / "prepared", root / "spm",
                       root / "bin", tmp_path / "out")
    done = summary["comparisons"]["naive vs good"]
    assert done["method"] == "naive" and done["reference"] == "good" and done["degenerate"] is None
    for metric in ("bleu", "chrf"):
        assert done["tests"][metric]["outcomes"] == {"better": 0, "worse": 4, "not_significant": 0, "degenerate": 0}
        test = done["tests"][metric]["directions"]["en-de"]
        assert test["delta"] < 0 and test["p"] < 0.05 and test["samples"] == 200
    # the mirror image of the baseline's own test: the same bootstrap draws, the opposite sign
    mirror = summary["significance"]["good"]["chrf"]["directions"]["en-de"]
    assert done["tests"]["chrf"]["directions"]["en-de"]["delta"] == pytest.approx(-mirror["delta"])
    assert summary["comparisons"]["good vs fd_ls"] == {"method": "good", "reference": "fd_ls",
                                                      "not_run": "not evaluated in this run: fd_ls"}
    md = (tmp_path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "| naive vs good | chrf | 0 | 4 | 0 | 0 |" in md
    assert "- good vs fd_ls: not run (not evaluated in this run: fd_ls)" in md


def test_comparisons_name_known_systems() -> None:
    with pytest.raises(ConfigError, match=r"evaluate\.comparisons\[0\]: 'nope' is not naive, a method_cfg entry"):
        experiment(comparisons=[["good", "nope"]])
    with pytest.raises(ConfigError, match=r"evaluate\.comparisons\[0\]: \['good', 'good'\]: expected"):
        experiment(comparisons=[["good", "good"]])
