"""Stage ``evaluate``: score every method's translations and compare them (lsnmt.eval.summary).

    python -m stages.evaluate --experiment default --log logs/default/evaluate.log

Writes ``results/{exp}/evaluate/{method}/{src}-{tgt}.json`` (every metric with its sacreBLEU
signature; an extra test set such as the held-out ``test.tatoeba`` in ``{method}/test.tatoeba/``),
``summary.json`` (the extra test sets under ``test_sets``) and ``summary.md``, and the numbers DVC declares as
metrics, one file per test set and system, ``results/{exp}/metrics/evaluate/{test set}/{system}.json``
(lsnmt.eval.metrics).
"""

import torch

from lsnmt import paths as P
from lsnmt import record
from lsnmt.eval.metrics import mt_rows, write_metrics
from lsnmt.eval.summary import evaluate
from lsnmt.runner.stage import run_all_methods


def _evaluate(exp, methods: tuple[str, ...]) -> None:
    torch.set_num_threads(exp.evaluate.cpu_threads)  # whatever the core count (EvaluateConfig.cpu_threads)
    name = exp.name
    summary = evaluate(exp, methods, P.at(P.EXPERIMENT_RESULTS, name), P.at(P.PREPARED, name), P.at(P.SPM, name),
                       P.at(P.BIN, name), P.at(P.EVALUATE, name))
    record.write(P.at(P.EVALUATE, name), train=record.trainings(P.at(P.TRAINED, name), methods))
    write_metrics(mt_rows(summary), P.at(P.METRICS, name, stage="evaluate"))


def main(argv: list[str] | None = None) -> None:
    run_all_methods("evaluate", _evaluate, argv)


if __name__ == "__main__":
    main()
