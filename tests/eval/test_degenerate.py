"""Degenerate output (lsnmt/eval/degenerate.py): the rules, and what evaluate and summary.md make of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsnmt.eval import degenerate
from lsnmt.eval.degenerate import Output
from lsnmt.eval.summary import evaluate
from tests.eval.helpers import experiment, make_world, write
from tests.eval.test_evaluate import any_method_loads_as_naive  # noqa: F401  (parameter counts of the doubles)

CFG = experiment().evaluate


def test_length_ratio_counts_non_space_characters() -> None:
    assert degenerate.length(["a b", ""], ["abcd", "ef gh"]) == {"hyp_chars": 2, "ref_chars": 8, "ratio": 0.25}
    assert degenerate.length([""], [""])["ratio"] == 1.0
    assert degenerate.bleu_metric(["chrf", "spbleu-flores200", "bleu"]) == "spbleu-flores200"
    assert degenerate.bleu_metric(["chrf"]) is None


@pytest.mark.parametrize(("a", "b", "why"), [
    (Output(name="x", ratio=0.1, bleu=30.0), Output(name="y", ratio=1.0, bleu=30.0), "x: length ratio 0.10 < 0.3"),
    (Output(name="x", ratio=1.0, bleu=30.0), Output(name="y", ratio=0.2, bleu=30.0), "y: length ratio 0.20 < 0.3"),
    (Output(name="x", ratio=1.0, bleu=0.09), Output(name="y", ratio=0.9, bleu=0.0), "both below 1.0 BLEU"),
    (Output(name="x", ratio=1.0, bleu=1.5), Output(name="y", ratio=0.9, bleu=0.0), None),  # one is informative
    (Output(name="x", ratio=0.3, bleu=None), Output(name="y", ratio=1.0, bleu=None), None),  # no BLEU metric
])
def test_pair_rules(a: Output, b: Output, why: str | None) -> None:
    got = degenerate.pair(a, b, CFG)
    assert got == why if why is None else why in got


def test_alone() -> None:
    assert degenerate.alone(Output(name="x", ratio=0.9, bleu=0.5), CFG) == "BLEU 0.50 < 1.0"
    assert degenerate.alone(Output(name="x", ratio=0.9, bleu=5.0), CFG) is None


def _garbage(line: str) -> str:
    """Same length, no word of the reference: BLEU 0, length ratio 1."""
    return " ".join("q" * len(w) for w in line.split())


def test_degenerate_pairs_get_no_verdict_and_healthy_ones_keep_theirs(tmp_path: Path) -> None:
    """naive: garbage of the right length (BLEU 0); good: the references; fd: the first word of each reference
    (near-empty); fd_ls: garbage with the first real word (below 1 BLEU, like the baseline)."""
    exp = experiment(similarity_sets=[], tsne_sets=[])
    w = make_world(tmp_path / "world", exp, ("naive", "good", "fd"))
    for s, t in exp.data.eval_pairs:
        refs = (w.results / "translate" / "good" / f"{s}-{t}.hyp").read_text().splitlines()
        write(w.results / "translate" / "naive" / f"{s}-{t}.hyp", map(_garbage, refs))
        write(w.results / "translate" / "fd" / f"{s}-{t}.hyp", (x.split()[0] for x in refs))
        write(w.results / "translate" / "fd" / "ls" / f"{s}-{t}.hyp",
              (x.split()[0] + " " + _garbage(" ".join(x.split()[1:])) for x in refs))
    summary = evaluate(exp, exp.name, ("naive", "good", "fd"), w.results, w.prepared, w.spm, w.bin, tmp_path / "out")
    flags, sig = summary["degenerate"], summary["significance"]
    assert 0 < summary["scores"]["fd_ls"]["bleu"]["averages"]["all"] < 1.0  # the fixture does what it says
    assert set(flags["systems"]) == {"naive", "fd", "fd_ls"} and "length ratio" in flags["systems"]["fd"]
    assert "length ratio" in flags["pairs"]["fd"] and "both below 1.0 BLEU" in flags["pairs"]["fd_ls"]
    assert "good" not in flags["pairs"]
    for system in ("fd", "fd_ls"):  # no verdict, on any metric or direction, and no win ratio
        for metric in ("bleu", "chrf"):
            assert sig[system][metric]["outcomes"] == {"better": 0, "worse": 0, "not_significant": 0,
                                                       "degenerate": 4}
            assert all(t["significant"] is None and t["degenerate"] for t in sig[system][metric]["directions"].values())
            assert set(summary["win_ratio"][system][metric].values()) == {None}
    assert sig["good"]["bleu"]["outcomes"] == {"better": 4, "worse": 0, "not_significant": 0, "degenerate": 0}
    assert summary["win_ratio"]["good"]["bleu"]["all"] == 100.0
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "| fd (degenerate) |" in md and "| fd_ls (degenerate) |" in md and "| naive (degenerate) |" in md
    assert "| good | 100.00 | 100.00 | 100.00 | 100.0 | 4 / 0 |" in md
    assert md.count(" | n/a | n/a |") == 4  # fd and fd_ls, BLEU and chrF: win ratio and significance
    assert "hypotheses with fewer than 0.3 of the references' non-space characters, or an average below 1.0 BLEU" in md
    assert "- `fd_ls` vs `naive`: no verdict, both below 1.0 BLEU" in md
