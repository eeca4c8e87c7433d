"""The evaluate step: every configured metric per (system, test set, direction), then the experiment's summary.

A system is a trained method read through one inference route (``lsnmt.methods.systems``): every method is
one system, except FD and LMS+FD, trained once and scored through both routes, ``<method>`` (the configured
route) and ``<method>_<route>`` (the other; LMS-FD Sec. 3.2, 5).

Every test set of ``data.test_sets`` is scored alike: the primary ``test`` (the released test split, FLORES-200
devtest in ``default``) and each held-out ``test.{corpus}`` (in-domain, disjoint from training:
``lsnmt.data.heldout``); an extra test set lies in a subfolder of its name (``lsnmt.data.layout``).

Reads (``results_dir`` is ``results/{spec}``)::

    {results_dir}/translate/{method}/{src}-{tgt}.hyp   detokenised hypotheses (first decode.max_sentences lines);
    {results_dir}/translate/{method}/{route}/…         those of another route
    {results_dir}/translate/{method}/[{route}/]{test set}/{src}-{tgt}.hyp   those of an extra test set
    {results_dir}/translate/{method}/w{w}/…            those of a CLM top-w sweep point (CLM Figure 4)
    {hypotheses folder}/length_limit.json              hypotheses that stopped at the length limit, per direction
    {results_dir}/train/{method}/model.pt              similarity search, t-SNE, parameter counts
    {prepared_dir}/{test set}/{src}-{tgt}.{src,tgt}    tagged sources (COMET only), references
    {prepared_dir}/multiway/{corpus}.{lang}            similarity search and t-SNE sets
    {prepared_dir}/report.json                         training sizes (resource groups)
    {spm_dir}/spm.model, symbols.json; {bin_dir}/meta.json

Writes ``out_dir`` as a whole (built under a temporary name, then swapped in)::

    {system}/{src}-{tgt}.json    scores with sacreBLEU signatures, off-target rate, sentences scored,
                                 ``at_length_limit`` (``None`` where the translate stage wrote no count)
    {system}/{test set}/…        the same for an extra test set
    summary.json                 averages, groups, win ratio, significance (against the baseline, and each of
                                 ``evaluate.comparisons``: ``comparisons``), degenerate output, off-target,
                                 similarity, cost of the primary test set; ``test_sets``: ``{test set: the same
                                 keys but the analyses (similarity, figures, cost, atp)}`` for each extra one;
                                 ``test_set`` and ``label`` (e.g. in-domain held-out) say which;
                                 ``length_limit``: hypotheses at the length limit per system (issue 18);
                                 ``systems``: each system's method, route and top-w
    summary.md                   the same as Markdown tables, one section per test set
    figures/tsne-{system}-{corpus}.png

Off-target rates are computed for every direction. The summary pools them over the
zero-shot directions (evaluated but not trained, CLM Table 6). When the experiment
has none, it says so and pools the en-xx directions instead (the translations
into non-English languages the model was asked for); nothing extra is decoded.

Hypotheses at the length limit (``max_len_a * |x| + max_len_b``, fairseq's ``0 * |x| + 200`` for the papers) were
probably cut; their count (``lsnmt.decode.translate``) goes into each score JSON and the summary, with a warning in
the log and in ``summary.md`` when it is above 0.

Degenerate output (``lsnmt/eval/degenerate.py``: near-empty hypotheses, or two systems both below 1 BLEU) gets
no significance verdict and no win ratio against the baseline; ``summary.md`` marks it and says why.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsnmt.data.encode import split_tags
from lsnmt.data.layout import PRIMARY_TEST, test_set_subdir
from lsnmt.decode.translate import LENGTH_LIMIT, length_advice
from lsnmt.eval import aggregate, degenerate, offtarget
from lsnmt.eval import comparisons as compare
from lsnmt.eval.analyses import analyses
from lsnmt.eval.comet import comet_score, import_comet
from lsnmt.eval.config import EvaluateView
from lsnmt.eval.groups import language_groups
from lsnmt.eval.markdown import markdown
from lsnmt.eval.scores import read_pair, require_spm_model, score_direction
from lsnmt.io import DataError, atomic_dir, atomic_write, iter_lines, write_json
from lsnmt.methods import System, systems

log = logging.getLogger(__name__)

Pair = tuple[str, str]


def name(pair: Pair) -> str:
    return f"{pair[0]}-{pair[1]}"


def check_setup(spec: EvaluateView) -> None:
    """Fail before any work when a configured metric cannot run (spBLEU model, COMET package)."""
    for metric in spec.evaluate.metrics:
        if metric.startswith("spbleu-"):
            require_spm_model(metric.removeprefix("spbleu-"))
    if "comet" in spec.evaluate.metrics:
        import_comet()


def untagged_sources(path: Path, spm_dir: Path, n: int) -> list[str]:
    """First ``n`` test sources with the language / corpus tags peeled off both ends."""
    names = json.loads((spm_dir / "symbols.json").read_text(encoding="utf-8"))["symbols"]
    symbols = dict.fromkeys(names, 0)
    return [split_tags(line, symbols)[1] for line in list(iter_lines(path))[:n]]


def test_set_label(spec: EvaluateView, test_set: str) -> str:
    """What a test set measures, for the summary: a held-out one is in-domain; the primary one is out-of-domain
    where none of its corpora is a training corpus."""
    if test_set != PRIMARY_TEST:
        return f"in-domain held-out ({test_set.removeprefix('test.')}, disjoint from training)"
    tested = [s.name for s in spec.data.sources if "test" in s.splits]
    trained = {s.name for s in spec.data.sources if "train" in s.splits}
    return (f"in-domain ({', '.join(tested)}, a training corpus)" if trained.intersection(tested) else
            f"out-of-domain ({', '.join(tested)}, no training corpus)")


def score_one(spec: EvaluateView, pair: Pair, hyps: list[str], refs: list[str], lid: Any, test_dir: Path,
              spm_dir: Path) -> dict[str, Any]:
    """The record of one (method, direction) of the test set in ``test_dir`` (``prepared/{test set}``)."""
    cfg = spec.evaluate
    scores = score_direction(hyps, refs, pair[1], cfg.metrics, cfg.bleu_tokenize)
    if "comet" in cfg.metrics:
        srcs = untagged_sources(test_dir / f"{name(pair)}.src", spm_dir, len(hyps))
        scores["comet"] = comet_score(srcs, hyps, refs, cfg.comet_model, cfg.comet_batch_size)
    return {"direction": name(pair), "src": pair[0], "tgt": pair[1], "sentences": len(hyps),
            "zero_shot": pair not in spec.data.train_pairs, "scores": scores,
            "length": degenerate.length(hyps, refs),
            "offtarget": offtarget.offtarget(offtarget.identify(lid, hyps), hyps, pair[1], cfg.lid_min_chars,
                                             ref_labels=offtarget.identify(lid, refs))}


def significance(spec: EvaluateView, methods: Sequence[str], hyps: dict[str, dict[Pair, list[str]]],
                 refs: dict[Pair, list[str]], records: dict[str, dict[Pair, dict]],
                 flags: dict[str, Any]) -> dict[str, Any]:
    """Paired bootstrap of every method against ``evaluate.baseline``, per sacreBLEU metric and direction; none
    where the outputs are degenerate (``flags``: :func:`lsnmt.eval.degenerate.flags`), which get the reason."""
    base = spec.evaluate.baseline
    return {m: compare.tests(spec, m, base, hyps, refs, records, flags["pairs"].get(m))
            for m in methods if m != base}


def offtarget_summary(spec: EvaluateView, records: dict[str, dict[Pair, dict]], sets: dict[str, list[Pair]]) -> dict:
    """Pooled off-target rates per method, overall and per target language, on the zero-shot directions."""
    if "zero-shot" in sets:
        scope, pairs, note = "zero-shot", sets["zero-shot"], ""
    else:
        scope, pairs = ("en-xx", sets["en-xx"]) if sets["en-xx"] else ("all", sets["all"])
        note = (f"the experiment has no zero-shot direction (every evaluation direction is trained); "
                f"rates over the {scope} directions instead")
    per_method = {}
    for method, recs in records.items():
        results = [recs[p]["offtarget"] for p in pairs]
        per_method[method] = {"overall": offtarget.pooled(results),
                              "per_language": {t: offtarget.pooled([r for r in results if r["tgt"] == t])
                                               for t in sorted({p[1] for p in pairs})}}
    return {"scope": scope, "directions": [name(p) for p in pairs], "note": note, "caveat": offtarget.LID_NOTE,
            "lid_model": Path(spec.evaluate.lid_model).name if spec.evaluate.lid_model else "lid.176.ftz",
            "methods": per_method}


def scores_by_metric(records: dict[Pair, dict], metric: str) -> dict[Pair, float]:
    return {p: r["scores"][metric]["score"] for p, r in records.items()}


def summarise(spec: EvaluateView, exp_name: str, methods: Sequence[str], records: dict[str, dict[Pair, dict]],
              groups: tuple[dict[str, str], str], pairs: Sequence[Pair]) -> dict[str, Any]:
    """Averages, group averages and win ratios of every metric on ``pairs`` of one test set (``summary.json``
    without the significance and the analyses)."""
    cfg = spec.evaluate
    sets = aggregate.direction_sets(pairs, spec.data.train_pairs, spec.data.pivot)
    metrics = [m for m in cfg.metrics if all(m in r["scores"] for recs in records.values() for r in recs.values())]
    baseline = cfg.baseline if cfg.baseline in methods else None
    first = records[methods[0]]
    summary: dict[str, Any] = {
        "experiment": exp_name, "methods": list(methods), "baseline": baseline, "metrics": metrics,
        "signatures": {m: sorted({r["scores"][m]["signature"] for r in first.values()}) for m in metrics},
        "sentences": {name(p): first[p]["sentences"] for p in pairs},
        "direction_sets": {k: [name(p) for p in v] for k, v in sets.items()},
        "groups": {"source": groups[1], "languages": groups[0]},
        "scores": {m: {metric: aggregate.summarise(scores_by_metric(records[m], metric), sets, groups[0],
                                                   spec.data.pivot) for metric in metrics} for m in methods},
        "win_ratio": {}, "offtarget": offtarget_summary(spec, records, sets),
        "degenerate": degenerate.flags(cfg, records, baseline),
    }
    if baseline is None:
        summary["baseline_note"] = f"evaluate.baseline {cfg.baseline!r} is not among the methods: no win ratio"
    else:  # none against the baseline where both outputs are degenerate (lsnmt/eval/degenerate.py)
        summary["win_ratio"] = {m: {metric: dict.fromkeys(sets) if m in summary["degenerate"]["pairs"] else
                                    aggregate.win_ratios(scores_by_metric(records[m], metric),
                                                         scores_by_metric(records[baseline], metric), sets)
                                    for metric in metrics} for m in methods if m != baseline}
    return summary


@dataclass(frozen=True)
class Scored:
    """One test set's hypotheses and references per direction, and the record of every (system, direction)."""

    hyps: dict[str, dict[Pair, list[str]]]
    refs: dict[Pair, list[str]]
    records: dict[str, dict[Pair, dict]]


def score_set(spec: EvaluateView, scored: Sequence[System], test_set: str, pairs: Sequence[Pair], lid: Any,
              results_dir: Path, prepared_dir: Path, spm_dir: Path) -> Scored:
    """Score every system on every direction of one test set against ``{prepared_dir}/{test set}/*.tgt``."""
    out = Scored({}, {}, {})
    for system in scored:
        method = system.name
        out.hyps[method], out.records[method] = {}, {}
        cut = at_length_limit(system.hyp_dir(results_dir, test_set))
        for pair in pairs:
            h, r = read_pair(system.hyp_dir(results_dir, test_set) / f"{name(pair)}.hyp",
                             prepared_dir / test_set / f"{name(pair)}.tgt", spec.decode.max_sentences)
            out.hyps[method][pair], out.refs[pair] = h, r
            out.records[method][pair] = {"method": method,
                                         **score_one(spec, pair, h, r, lid, prepared_dir / test_set, spm_dir),
                                         "at_length_limit": None if cut is None else cut.get(name(pair))}
            log.info("evaluate %s %s %s: %s", test_set, method, name(pair), ", ".join(
                f"{k} {v['score']:.2f}" for k, v in out.records[method][pair]["scores"].items()))
    return out


def at_length_limit(hyp_dir: Path) -> dict[str, int] | None:
    """``{direction: hypotheses at the length limit}`` of one folder of hypotheses (``length_limit.json``, written
    by the translate stage), or ``None`` where it wrote none."""
    path = hyp_dir / LENGTH_LIMIT
    if not path.is_file():
        return None
    try:
        counts = json.loads(path.read_text(encoding="utf-8"))["at_limit"]
    except (ValueError, KeyError, TypeError) as exc:
        raise DataError(f"{path}: not a length-limit record of the translate stage ({exc!r})") from None
    return {str(k): int(v) for k, v in counts.items()}


def length_limit_summary(spec: EvaluateView, test_set: str, records: dict[str, dict[Pair, dict]]) -> dict[str, Any]:
    """``{system: {"at_limit": total (None unless every direction has a count), "directions": [those with any]}}``
    on one test set; a warning per system with hypotheses at the limit (issue 18: the papers' fairseq default must
    cut none)."""
    out: dict[str, Any] = {}
    for method, recs in records.items():
        counts = [r["at_length_limit"] for r in recs.values()]
        cut = sum(c or 0 for c in counts)
        out[method] = {"at_limit": None if None in counts else cut,
                       "directions": [name(p) for p, r in recs.items() if r["at_length_limit"]]}
        if cut:
            total = sum(r.get("sentences", 0) for r in recs.values())
            log.warning("evaluate %s %s: %d of %d hypotheses reached the length limit (%g x source + %d, capped by "
                        "the model's positions) in %s: %s", test_set, method, cut, total, spec.decode.max_len_a,
                        spec.decode.max_len_b, ", ".join(out[method]["directions"]),
                        length_advice(cut, total, spec.train.max_steps))
    return out


def set_summary(spec: EvaluateView, exp_name: str, names: Sequence[str], test_set: str, scored: Scored,
                groups: tuple[dict[str, str], str]) -> dict[str, Any]:
    """The summary of one test set: which it is, averages, groups, win ratio, degenerate output, significance,
    hypotheses at the length limit."""
    summary = {"test_set": test_set, "label": test_set_label(spec, test_set),
               **summarise(spec, exp_name, names, scored.records, groups, list(scored.refs)),
               "length_limit": length_limit_summary(spec, test_set, scored.records)}
    summary["significance"] = (significance(spec, names, scored.hyps, scored.refs, scored.records,
                                            summary["degenerate"]) if summary["baseline"] else {})
    summary["comparisons"] = compare.comparisons(spec, names, scored.hyps, scored.refs, scored.records)
    return summary


def evaluate(spec: EvaluateView, exp_name: str, methods: tuple[str, ...], results_dir: Path, prepared_dir: Path,
             spm_dir: Path, bin_dir: Path, out_dir: Path) -> dict:
    """Score every system of the trained ``methods`` of experiment ``exp_name`` (``spec``: the sections it reads)
    on every direction of every test set and write ``out_dir``
    (layout above); return the summary, whose ``methods`` are the systems' names."""
    if not methods:
        raise ValueError("evaluate needs at least one method")
    if PRIMARY_TEST not in spec.data.test_sets:
        raise ValueError(f"experiment {exp_name!r} has no evaluation direction (data.eval_directions)")
    scored = [s for m in methods for s in systems(spec.method_cfg, m, f"experiments.{exp_name}.method_cfg")]
    check_setup(spec)
    lid = offtarget.load_lid(spec.evaluate.lid_model)
    groups = language_groups(spec.evaluate.resource_groups, prepared_dir / "report.json", spec.data.pivot,
                             spec.evaluate.group_thresholds)
    sets = {test_set: score_set(spec, scored, test_set, pairs, lid, results_dir, prepared_dir, spm_dir)
            for test_set, pairs in spec.data.test_sets.items()}
    names = tuple(s.name for s in scored)
    summary = set_summary(spec, exp_name, names, PRIMARY_TEST, sets[PRIMARY_TEST], groups)
    summary["test_sets"] = {t: set_summary(spec, exp_name, names, t, one, groups)
                            for t, one in sets.items() if t != PRIMARY_TEST}
    summary["systems"] = {s.name: {"method": s.method, "route": s.route, "top_w": s.top_w} for s in scored}
    with atomic_dir(out_dir) as tmp:
        for test_set, one in sets.items():
            for method, recs in one.records.items():
                for pair, rec in recs.items():
                    write_json(tmp / method / test_set_subdir(test_set) / f"{name(pair)}.json", rec)
        summary.update(analyses(spec, exp_name, scored, results_dir, prepared_dir, spm_dir, bin_dir, groups[0], tmp))
        write_json(tmp / "summary.json", summary)
        with atomic_write(tmp / "summary.md") as fh:
            fh.write(markdown(summary))
    return summary
