"""``experiments.<exp>.claim`` is checked at load: one line naming the key path (lsnmt.claim.config.ClaimConfig and
lsnmt.methods' check of its methods); the default experiment configures it, the others leave it empty."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from lsnmt.experiment.params import Params
from lsnmt.typed import ConfigError, load_yaml

ROOT = Path(__file__).resolve().parents[2]
CLAIM: dict[str, Any] = {
    "languages": ["en", "de", "fr"], "concepts": 8, "reverse": ["de"],
    "model": {"embed_dim": 8, "ffn_dim": 16, "heads": 2, "encoder_layers": 2, "decoder_layers": 1},
    "train": {"max_steps": 4, "warmup_steps": 2}, "methods": {"lms": {"kind": "lms", "rank": 2}}}


def _load(tmp_path: Path, **changes: Any) -> Params:
    raw = load_yaml(ROOT / "tests/fixtures/params.tiny.yaml")
    raw["experiments"]["tiny"]["claim"] = {**CLAIM, **changes}
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return Params.load(path)


def test_a_claim_loads(tmp_path: Path) -> None:
    claim = _load(tmp_path).get().claim
    assert claim is not None and claim.seeds == (1, 2) and claim.sentences["test"] == 100


@pytest.mark.parametrize(("changes", "message"), [
    ({"languages": ["en", "xx"]}, "experiments.tiny.claim.languages[1]: 'xx' is not a known language code"),
    ({"languages": ["en"]}, "experiments.tiny.claim.languages: at least two distinct languages"),
    ({"reverse": ["ru"]}, "experiments.tiny.claim.reverse[0]: 'ru' is not in languages"),
    ({"scramble": ["fr", "ru"]}, "experiments.tiny.claim.scramble[1]: 'ru' is not in languages"),
    ({"scramble": ["de"]}, "experiments.tiny.claim.scramble: 'de' is also in reverse"),
    ({"dense": {"lms": {"embed_dim": 12}}}, "experiments.tiny.claim.dense.lms: is already a system"),
    ({"dense": {"wide": {"embed_dim": 12, "heads": 5}}}, "experiments.tiny.claim.dense.wide: embed_dim 12 is not a "
                                                         "multiple of heads 5"),
    ({"dense": {"wide": {"width": 12}}}, "experiments.tiny.claim.dense.wide"),
    ({"dense_tolerance": 1.5}, "experiments.tiny.claim.dense_tolerance"),
    ({"min_len": 4, "max_len": 3}, "experiments.tiny.claim.max_len: 3 is below min_len 4"),
    ({"concepts": 2, "min_len": 1, "max_len": 2}, "experiments.tiny.claim.sentences: more than the distinct"),
    ({"sentences": {"train": 10, "test": 5}}, "experiments.tiny.claim.sentences: needs train, valid and test"),
    ({"seeds": [1, 1]}, "experiments.tiny.claim.seeds: one or more distinct seeds"),
    ({"methods": {"naive": {"kind": "lms"}}}, "experiments.tiny.claim.methods.naive: naive is always trained"),
    ({"methods": {"x": {"kind": "nope"}}}, "experiments.tiny.claim.methods.x.kind: unknown kind 'nope'"),
    ({"methods": {"x": {"kind": "lsl", "architecture": "lsl_search"}}},
     "experiments.tiny.claim.methods.x.architecture: the claim stage runs no search"),
    ({"methods": {"fd": {"kind": "fd"}, "fd_ls": {"kind": "lms"}}}, "experiments.tiny.claim.methods.fd_ls: is the ls"),
    ({"model": {"embed_dim": 8, "heads": 3}}, "experiments.tiny.claim.model.heads: embed_dim 8 is not a multiple"),
    ({"bootstrap_samples": 0}, "experiments.tiny.claim.bootstrap_samples: must be >= 1"),
])
def test_bad_claims_stop_at_load(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=None) as err:
        _load(tmp_path, **changes)
    assert message in str(err.value) and "\n" not in str(err.value), str(err.value)


def test_only_the_default_experiment_configures_a_claim() -> None:
    params = Params.load(ROOT / "params.yaml")
    assert [n for n, e in params.experiments.items() if e.claim is not None] == ["default", "default_gpu"]
    assert params.get("default_gpu").claim == params.get("default").claim  # the same claim at both scales
    claim = params.get("default").claim
    assert claim.model.embed_dim == 16 and {m.kind for m in claim.methods.values()} == {"lms", "fd", "lsl"}
    assert claim.scramble and len(claim.dense) == 2 and len(claim.seeds) >= 2  # the claims' dense baselines, seeds
