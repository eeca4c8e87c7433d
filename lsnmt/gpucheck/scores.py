"""sacreBLEU's BLEU and chrF of each translated method, per test set, with their signatures.

Hypotheses: ``results/gpu_check/translate/<method>/[<test set>/]<src>-<tgt>.hyp``; references: the prepared test
sets, ``data/gpu_check/prepared/<test set>/<src>-<tgt>.tgt`` as the evaluate stage reads them, their first lines
(``decode.max_sentences``: the translate stage decodes the first sentences of each direction). One corpus score
over every direction of a test set (each direction's hypotheses, then the next's), as sacreBLEU scores one file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from lsnmt.data.layout import PRIMARY_TEST, test_set_subdir


@dataclass(frozen=True)
class Score:
    method: str
    test_set: str
    bleu: float
    chrf: float
    directions: int
    sentences: int


def gather(hyp_dir: Path, ref_dir: Path) -> tuple[list[str], list[str], int]:
    """Hypotheses and references of every direction in ``hyp_dir`` that has references; how many directions."""
    hyps: list[str] = []
    refs: list[str] = []
    n = 0
    for hyp in sorted(hyp_dir.glob("*.hyp")):
        ref = ref_dir / f"{hyp.stem}.tgt"
        if not ref.is_file():
            continue
        lines = hyp.read_text(encoding="utf-8").splitlines()
        hyps += lines
        refs += ref.read_text(encoding="utf-8").splitlines()[: len(lines)]
        n += 1
    return hyps, refs, n


def score(
    methods: list[str], results: Path, prepared: Path, test_sets: tuple[str, ...] = (PRIMARY_TEST, "test.tatoeba")
) -> tuple[list[Score], str]:
    """Each method's scores per test set (those it has hypotheses for), and the two signatures in one line ("" when
    nothing was scored: a signature records the number of references, known once a score is taken)."""
    from sacrebleu.metrics import BLEU, CHRF

    bleu, chrf = BLEU(), CHRF()
    out = []
    for method in methods:
        for test_set in test_sets:
            hyps, refs, n = gather(results / method / test_set_subdir(test_set), prepared / test_set)
            if n and len(hyps) == len(refs):
                out.append(
                    Score(
                        method,
                        test_set,
                        bleu.corpus_score(hyps, [refs]).score,
                        chrf.corpus_score(hyps, [refs]).score,
                        n,
                        len(hyps),
                    )
                )
    return out, f"BLEU {bleu.get_signature()}; chrF {chrf.get_signature()}" if out else ""
