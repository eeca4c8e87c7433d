"""Stage ``evaluate``: score every method's translations and compare them (lsnmt.eval.summary).

    python -m stages.evaluate --experiment default --log logs/default/evaluate.log

Reads :class:`lsnmt.eval.config.EvaluateView` only (``data``, ``model``, ``train``, ``decode``, ``evaluate``,
``method_cfg``). Writes ``results/{exp}/evaluate/{method}/{src}-{tgt}.json`` (every metric with its sacreBLEU
signature; an extra test set such as the held-out ``test.tatoeba`` in ``{method}/test.tatoeba/``),
``summary.json`` (the extra test sets under ``test_sets``) and ``summary.md``, and the numbers DVC declares as
metrics, one file per test set and system, ``results/{exp}/metrics/evaluate/{test set}/{system}.json``
(lsnmt.eval.metrics).
"""

import torch

from lsnmt import paths as P
from lsnmt import record
from lsnmt.eval.config import EvaluateView
from lsnmt.eval.metrics import mt_rows, write_metrics
from lsnmt.eval.summary import evaluate
from lsnmt.runner.base import Job, run_stage

VIEW = EvaluateView


def _evaluate(view: EvaluateView, job: Job) -> None:
    torch.set_num_threads(view.evaluate.cpu_threads)  # whatever the core count (EvaluateConfig.cpu_threads)
    exp, methods = job.experiment, job.lists["methods"]
    summary = evaluate(view, exp, methods, P.at(P.EXPERIMENT_RESULTS, exp), P.at(P.PREPARED, exp), P.at(P.SPM, exp),
                       P.at(P.BIN, exp), P.at(P.EVALUATE, exp))
    record.write(P.at(P.EVALUATE, exp), train=record.trainings(P.at(P.TRAINED, exp), methods))
    write_metrics(mt_rows(summary), P.at(P.METRICS, exp, stage="evaluate"))


def main(argv: list[str] | None = None) -> None:
    run_stage("evaluate", VIEW, _evaluate, argv, lists=("methods",))


if __name__ == "__main__":
    main()
