"""URIEL typological features from the data files that the ``lang2vec`` package ships (Littell et al. 2017).

lang2vec 1.1.2 (PyPI) installs on Python 3.11 and ships URIEL (``lang2vec/data/*.npz``), but its module
imports ``pkg_resources``, which setuptools >= 81 no longer provides: ``import lang2vec.lang2vec`` fails in
a current environment. This module reads the same files and reproduces ``lang2vec.get_features`` for the
URIEL feature sets (``syntax_*``, ``phonology_*``, ``inventory_*``, ``fam``, ``geo``; ``+`` concatenates and
``|`` takes the element-wise maximum, as lang2vec); ``tests/xelm/test_uriel.py`` checks it against lang2vec
itself, imported with a stand-in ``pkg_resources``.

Missing values (lang2vec's ``-1``, printed ``--``) are ``nan``. Two-letter codes map to ISO 639-3 through
lang2vec's own ``letter_codes.json`` (``zh -> zho``, ``sw -> swa``), as ``lang2vec.get_features`` does.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources

import numpy as np

from lsnmt.io import DataError

FEATURE_SETS: dict[str, tuple[str, str, str]] = {
    "syntax_wals": ("features.npz", "WALS", "S_"),
    "phonology_wals": ("features.npz", "WALS", "P_"),
    "syntax_sswl": ("features.npz", "SSWL", "S_"),
    "syntax_ethnologue": ("features.npz", "ETHNO", "S_"),
    "phonology_ethnologue": ("features.npz", "ETHNO", "P_"),
    "inventory_ethnologue": ("features.npz", "ETHNO", "INV_"),
    "inventory_phoible_aa": ("features.npz", "PHOIBLE_AA", "INV_"),
    "inventory_phoible_gm": ("features.npz", "PHOIBLE_GM", "INV_"),
    "inventory_phoible_saphon": ("features.npz", "PHOIBLE_SAPHON", "INV_"),
    "inventory_phoible_spa": ("features.npz", "PHOIBLE_SPA", "INV_"),
    "inventory_phoible_ph": ("features.npz", "PHOIBLE_PH", "INV_"),
    "inventory_phoible_ra": ("features.npz", "PHOIBLE_RA", "INV_"),
    "inventory_phoible_upsid": ("features.npz", "PHOIBLE_UPSID", "INV_"),
    "syntax_knn": ("feature_predictions.npz", "predicted", "S_"),
    "phonology_knn": ("feature_predictions.npz", "predicted", "P_"),
    "inventory_knn": ("feature_predictions.npz", "predicted", "INV_"),
    "syntax_average": ("feature_averages.npz", "avg", "S_"),
    "phonology_average": ("feature_averages.npz", "avg", "P_"),
    "inventory_average": ("feature_averages.npz", "avg", "INV_"),
    "fam": ("family_features.npz", "FAM", ""),
    "geo": ("geocoord_features.npz", "GEOCOORDS", ""),
}
"""lang2vec's ``FEATURE_SETS_DICT`` (without ``id`` and ``learned``, which are not URIEL features)."""


def _data_file(name: str) -> str:
    try:
        return str(resources.files("lang2vec").joinpath("data", name))
    except ModuleNotFoundError:
        raise DataError("the lang2vec package is not installed (pip install lang2vec==1.1.2): it ships the URIEL "
                        "data that typology clustering reads") from None


@cache
def _database(name: str) -> dict[str, np.ndarray]:
    with np.load(_data_file(name)) as db:
        return {k: db[k] for k in db.files}


@cache
def letter_codes() -> dict[str, str]:
    with open(_data_file("letter_codes.json"), encoding="utf-8") as fh:
        return json.load(fh)


def iso3(code: str) -> str:
    """lang2vec's code for ``code``: two-letter codes through its ``letter_codes.json``."""
    return letter_codes().get(code, code)


def _named_set(langs: list[str], feature_set: str) -> tuple[list[str], np.ndarray]:
    if feature_set not in FEATURE_SETS:
        raise DataError(f"unknown lang2vec feature set {feature_set!r} (known: {', '.join(sorted(FEATURE_SETS))})")
    filename, source, prefix = FEATURE_SETS[feature_set]
    db = _database(filename)
    index = {str(x): i for i, x in enumerate(db["langs"])}
    rows = []
    for code in langs:
        if iso3(code) not in index:
            raise DataError(f"language {code!r} ({iso3(code)}) is not in URIEL's {filename}")
        rows.append(index[iso3(code)])
    feats = [i for i, f in enumerate(db["feats"]) if str(f).startswith(prefix)]
    src = int(np.where(db["sources"] == source)[0][0])
    return [str(db["feats"][i]).replace(" ", "_") for i in feats], db["data"][rows][:, feats, src].astype(np.float64)


def get_features(langs: list[str], feature_set: str, *, minimal: bool = False) -> tuple[list[str], np.ndarray]:
    """``(feature names, values (len(langs), F))`` as ``lang2vec.get_features``; missing values are ``nan``.

    ``minimal`` drops the columns that are all 0, all 1 or all missing over ``langs`` (lang2vec's ``minimal``).
    """
    names: list[str] = []
    blocks = []
    for part in feature_set.split("+"):
        unions = [_named_set(langs, p) for p in part.split("|")]
        if len({len(n) for n, _ in unions}) != 1:
            raise DataError(f"cannot unite feature sets of different sizes in {part!r}")
        names += unions[0][0]
        blocks.append(np.maximum.reduce([v for _, v in unions]))
    values = np.concatenate(blocks, axis=1)
    if minimal:
        keep = ~(np.all(values == 0.0, axis=0) | np.all(values == 1.0, axis=0) | np.all(values == -1.0, axis=0))
        names, values = [n for n, k in zip(names, keep, strict=True) if k], values[:, keep]
    return names, np.where(values == -1.0, np.nan, values)
