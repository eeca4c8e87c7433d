"""The tasks' typed config: params.yaml's paper-scale values, the paper's language lists, errors with key paths,
and the paper-scale models params.yaml would build counted against LMS-FD Tables 4-5."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from lsnmt import methods
from lsnmt.experiment.params import Params
from lsnmt.report import paper as paper_tables
from lsnmt.report.paper_counts import count, load
from lsnmt.typed import ConfigError

ROOT = Path(__file__).resolve().parents[2]
PARAMS = Params.load(ROOT / "params.yaml")
ROWS = load(PARAMS)


def test_paper_scale_tasks_follow_the_paper() -> None:
    exp = PARAMS.get("xlmr_tasks")
    ner, qa = exp.task_cfg["wikiann"], exp.task_cfg["tydiqa"]
    table7 = [c for c in paper_tables.load("lmsfd", "7").columns if c not in ("Methods", "avg.", "WR (%)")]
    table8 = [c for c in paper_tables.load("lmsfd", "8").columns if c not in ("Methods", "avg.")]
    assert list(ner.languages) == table7 and len(table7) == 24  # Table 7's 24 languages, in its order
    assert list(qa.languages) == table8 and len(table8) == 6
    for t in (ner, qa):  # Sec. 5.3-5.4: XLM-R base, dropout 0.1, 20 epochs, 3 seeds
        assert (t.encoder.init, t.encoder.name, t.dropout, t.epochs, len(t.seeds)) == (
            "pretrained", "xlm-roberta-base", 0.1, 20, 3)
    for name in ("lms", "lms_fd"):  # d = 32, language-wise, FFN
        kind, cfg = methods.resolve_task(exp.task_method_cfg, name, "task_method_cfg")
        assert (kind, cfg.rank, cfg.synthesis, cfg.where) == (name, 32, "language", "ffn")
    assert PARAMS.tasks == ("wikiann", "tydiqa") and set(PARAMS.task_methods) == {"naive", "lms", "lms_fd"}


@pytest.mark.parametrize(("table", "task"), [("4", "wikiann"), ("5", "tydiqa")])
def test_the_counted_models_add_what_the_paper_adds(table: str, task: str) -> None:
    """params.csv's XLM-R rows count xlmr_tasks' task methods (the models task_train builds): LMS adds
    2 N d (c + r) per language (Sec. 2.2), LMS+FD one shared pair more, and the LS route deploys the language
    factors without the shared pair."""
    t = PARAMS.get("xlmr_tasks").task_cfg[task]
    rows = {r.method: r for r in ROWS if (r.table, r.experiment) == (table, task)}
    assert {r.source for r in rows.values()} == {f"experiments.xlmr_tasks.task_method_cfg.{m}" for m in (
        "naive", "lms", "lms_fd")} | {"experiments.xlmr_tasks.task_method_cfg.lms_fd (route ls)"}
    assert {r.num_languages for r in rows.values()} == {len(t.languages)}
    counted = {label: count(r) for label, r in rows.items()}
    per_lang = 2 * 12 * 32 * (768 + 3072)  # Sec. 2.2: 2 N d (c + r) per language
    naive = counted["naive"].train_params
    assert counted["lms"].train_params - naive == len(t.languages) * per_lang
    assert counted["lms+fd-share"].train_params - naive == (len(t.languages) + 1) * per_lang
    assert counted["lms+fd-share"].inference_params - naive == per_lang  # the Share route keeps the shared pair
    assert counted["lms+fd-ls"].inference_params == counted["lms"].inference_params


def _load(tmp_path: Path, edit) -> Params:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    edit(raw)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    return Params.load(path)


@pytest.mark.parametrize(("edit", "match"), [
    (lambda r: r["experiments"]["default"]["task_cfg"]["tydiqa"].update(select="best"),
     r"default\.task_cfg\.tydiqa\.select: TyDiQA-GoldP has no dev split"),
    (lambda r: r["experiments"]["default"]["task_cfg"]["wikiann"]["source"].update(kind="tydiqa"),
     r"default\.task_cfg\.wikiann\.source\.kind: a ner task reads 'wikiann'"),
    (lambda r: r["experiments"]["default"]["task_cfg"]["tydiqa"].update(languages=["en", "fr"]),
     r"default\.task_cfg\.tydiqa\.languages\[1\]: 'fr' is not a TyDiQA-GoldP language"),
    (lambda r: r["experiments"]["default"]["task_cfg"]["wikiann"].update(languages=["en", "xx"]),
     r"default\.task_cfg\.wikiann\.languages\[1\]: 'xx' is not a known language code"),
    (lambda r: r["experiments"]["default"]["task_method_cfg"].update(sw={"kind": "switch"}),
     r"default\.task_method_cfg\.sw\.kind: 'switch' is not available for the XLM-R tasks"),
    (lambda r: r["experiments"]["default"]["task_method_cfg"]["lms"].update(rnak=3),
     r"default\.task_method_cfg\.lms\.rnak: unknown key"),
    (lambda r: r.update(tasks=["wikiann", "squad"]), r"tasks\[1\]: 'squad' is not a key of"),
    (lambda r: r.update(task_methods=["naive", "lms_ls"]), r"task_methods\[1\]: 'lms_ls' is neither naive nor"),
])
def test_task_config_errors_name_the_key(tmp_path: Path, edit, match: str) -> None:
    with pytest.raises(ConfigError, match=match):
        _load(tmp_path, edit)


def test_xlmr_rows_cover_tables_4_and_5_and_their_misses_are_the_base_size() -> None:
    rows = [r for r in ROWS if r.task is not None]
    assert sorted((r.table, r.method) for r in rows) == sorted(
        (t, m) for t in ("4", "5") for m in ("naive", "lms", "lms+fd-share", "lms+fd-ls"))
    for row in rows:
        r = count(row)
        naive = count(next(x for x in rows if (x.table, x.method) == (row.table, "naive")))
        # every row is above the paper by XLM-R base's 7.45M alone: what the methods add is the paper's
        assert r.train_params - row.paper_train_params == pytest.approx(naive.train_params - 270e6, abs=1.0e6)
        assert r.implied_train_params is not None and abs(r.implied_train_params - row.paper_train_params) < 0.6e6
        assert abs(r.implied_inference_params - row.paper_inference_params) < 0.6e6  # type: ignore[operator]
