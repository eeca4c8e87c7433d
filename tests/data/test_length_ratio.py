"""Length-ratio cleaning keeps real Chinese, Japanese and Korean pairs: pieces, not characters.

The fixture (tests/fixtures/cjk/PROVENANCE.md) holds 12 human translations of FLORES-200 dev whose character
ratio exceeds 3: the former ``prepare`` filter dropped every one of them. ``prepare`` now keeps them, and the
``sample`` stage's M2M-100 ratio over SentencePiece pieces (``sample.max_piece_ratio``) keeps them too while it
drops a pair that is not a translation of the same length ("Yes." against a whole sentence).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsnmt.data.clean import keep_ratio, ratio_masks
from lsnmt.data.prepare import normalize, prepare
from lsnmt.data.sample import sample
from lsnmt.data.spm import train_spm
from lsnmt.io import DataError, iter_lines

from .helpers import experiment, raw_corpus

ROOT = Path(__file__).resolve().parents[2]
CJK = [line.split("\t") for line in (ROOT / "tests/fixtures/cjk/flores200_dev.tsv").read_text("utf-8").splitlines()]
EN_DEV = (ROOT / "embedded/flores200/dev/eng_Latn.dev").read_text("utf-8").splitlines()[:400]
DE_DEV = (ROOT / "embedded/flores200/dev/deu_Latn.dev").read_text("utf-8").splitlines()[:400]
LANGS = ("en", "de", "zh", "ja", "ko")
MISALIGNED = ("Yes.", CJK[0][3])
"""Not a translation: four characters against a whole Chinese sentence (the old filter kept it: under 10
characters, no ratio was checked)."""


def _pairs(lang: str) -> tuple[list[str], list[str]]:
    rows = [r for r in CJK if r[0] == lang]
    extra = [MISALIGNED] if lang == "zh" else []
    return [r[2] for r in rows] + [e for e, _ in extra], [r[3] for r in rows] + [x for _, x in extra]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    root = tmp_path_factory.mktemp("cjk")
    exp = experiment(LANGS, sample={"max_piece_ratio": 3.0},
                     spm={"vocab_size": 1000, "sentences_per_language": 1000, "threads": 1})
    evals = {lang: ["One.", "Two."] for lang in LANGS}
    raw = raw_corpus(root / "raw", {"en-de": (EN_DEV, DE_DEV), **{f"en-{x}": _pairs(x) for x in ("zh", "ja", "ko")}},
                     evals)
    report = prepare(exp, raw, root / "prepared")
    train_spm(exp, root / "prepared", root / "spm")
    return root, exp, report


def test_prepare_keeps_every_real_cjk_pair(world) -> None:
    _, _, report = world
    for lang, n in (("zh", 5), ("ja", 4), ("ko", 4)):
        counts = report["train"][f"en-{lang}"]["bitext"]
        assert counts["kept"] == counts["input"] == n, (lang, counts)
        assert "ratio" not in counts["dropped"]


def test_piece_ratio_keeps_translations_and_drops_the_mismatch(world) -> None:
    root, exp, _ = world
    masks = ratio_masks(exp, root / "prepared", root / "spm")
    assert masks[("en-zh", "bitext")].tolist() == [True] * 4 + [False]
    assert masks[("zh-en", "bitext")].tolist() == masks[("en-zh", "bitext")].tolist()  # the mirrored direction
    assert masks[("en-ja", "bitext")].all() and masks[("en-ko", "bitext")].all()
    stats = sample(exp, root / "prepared", root / "sampled", masks)
    zh = stats["en-zh"]["corpora"]["bitext"]
    assert (zh["n"], zh["dropped_ratio"]) == (4, 1) and stats["en-ja"]["corpora"]["bitext"]["dropped_ratio"] == 0
    tgt = list(iter_lines(root / "sampled" / "train" / "en-zh.tgt"))
    assert tgt == [normalize(r[3], "NFKC") for r in CJK if r[0] == "zh"]  # every real pair once, not the mismatch
    plan = json.loads((root / "sampled" / "sampling.json").read_text(encoding="utf-8"))
    assert plan["max_piece_ratio"] == 3.0 and plan["directions"]["zh-en"]["corpora"]["bitext"]["dropped_ratio"] == 1


def test_no_ratio_and_no_model(world, tmp_path: Path) -> None:
    root, exp, _ = world
    assert ratio_masks(experiment(LANGS), root / "prepared", root / "spm") == {}
    with pytest.raises(DataError, match=r"spm\.model: not found; sample\.max_piece_ratio counts SentencePiece"):
        ratio_masks(exp, root / "prepared", tmp_path / "nothing")


def test_ratio_rule_is_moses_clean_corpus() -> None:
    """Moses' clean-corpus-n.perl: drop when either count over the other exceeds r (and an empty side)."""
    import numpy as np

    a, b = np.array([10, 10, 13, 0, 1]), np.array([30, 31, 4, 3, 3])
    assert keep_ratio(a, b, 3.0).tolist() == [True, False, False, False, True]
