"""Language groups the papers average over, as data, and grouping by training size.

* OPUS-100 (Zhang et al. 2020; LMS-FD Sec. 4 "Evaluation", CLM Sec. 4.3): by the
  training pairs of each en-xx pair, high > 0.9M, low < 0.1M, medium otherwise
  (45 / 28 / 21 of the 94 test pairs). :func:`groups_from_sizes` applies the
  thresholds to the pairs as released (``input`` lines of ``prepared/report.json``,
  before cleaning), summed over corpora.
* CLM Table 8: the 74 non-English Flores devtest languages used for similarity
  search and t-SNE, grouped Low / Med / High by their OPUS-100 data size.
* LSL Sec. 4.2 footnote 8 and App. F (Table 11): European (de en es fr it pt),
  CJK (zh ja ko) and Swahili, averaged per group pair (``EUR -> CJK``).

Put one of these mappings under ``evaluate.resource_groups`` in params.yaml to use it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from lsnmt.io import DataError

HIGH_ABOVE = 900_000
LOW_BELOW = 100_000
GROUP_ORDER = ("low", "medium", "high")


def _groups(**members: str) -> dict[str, str]:
    return {lang: group for group, langs in members.items() for lang in langs.split()}


CLM_FLORES_GROUPS: dict[str, str] = _groups(
    low="am be ha ig kk kn ky mr my oc or ps te zu",
    medium="af as az cy ga gl gu hi ka km ku ml ne pa ta tg ur uz xh",
    high="ar bg bn bs ca cs da de el es et fa fi fr he hr hu id is it ja ko lt mk ms mt nl no pl pt ro ru sk sl "
         "sr sv th tr uk vi zh",
)
"""CLM Table 8 (14 low, 19 medium, 41 high)."""

LSL_FAMILIES: dict[str, str] = _groups(EUR="de en es fr it pt", CJK="zh ja ko", SW="sw")
"""LSL App. F, Table 11: language families of the 10 Flores-101 languages."""


def size_group(pairs: int, low_below: int = LOW_BELOW, high_above: int = HIGH_ABOVE) -> str:
    """Group of a language pair with ``pairs`` training sentence pairs (default: OPUS-100's thresholds)."""
    if pairs > high_above:
        return "high"
    if pairs < low_below:
        return "low"
    return "medium"


def training_sizes(report_path: Path, pivot: str) -> dict[str, int]:
    """Training pairs as released (``input``, summed over corpora) of each en-xx pair in ``report.json``."""
    if not report_path.is_file():
        raise DataError(f"{report_path}: not found (run the prepare stage first)")
    train = json.loads(report_path.read_text(encoding="utf-8")).get("train", {})
    sizes: dict[str, int] = {}
    for direction, corpora in train.items():
        src, tgt = direction.split("-")
        if src == pivot:
            sizes[tgt] = sum(int(c["input"]) for c in corpora.values())
    return sizes


def groups_from_sizes(sizes: Mapping[str, int], thresholds: tuple[int, int] = (LOW_BELOW, HIGH_ABOVE)
                      ) -> dict[str, str]:
    return {lang: size_group(n, *thresholds) for lang, n in sorted(sizes.items())}


def language_groups(configured: Mapping[str, str], report_path: Path, pivot: str,
                    thresholds: tuple[int, int] = (LOW_BELOW, HIGH_ABOVE)) -> tuple[dict[str, str], str]:
    """(language -> group, where the groups come from): ``evaluate.resource_groups``, else the training sizes cut
    at ``thresholds`` = (low below, high above) (``evaluate.group_thresholds``)."""
    if configured:
        return dict(configured), "evaluate.resource_groups"
    sizes = training_sizes(report_path, pivot)
    low, high = thresholds
    paper = " (OPUS-100, Zhang et al. 2020)" if (low, high) == (LOW_BELOW, HIGH_ABOVE) else ""
    source = (f"training pairs per en-xx pair as released (prepared/report.json): high > {high}, "
              f"low < {low}, medium otherwise, evaluate.group_thresholds{paper}")
    return groups_from_sizes(sizes, thresholds), source
