"""Stage ``lm_eval``: perplexities of the seed, dense, experts, ensembles, HMR and LAPT models, written as the data
of x-elm Tables 1, 2, 7, 8 and Figures 3, 4, 6 (lsnmt.xelm.perplexities).

    python -m stages.lm_eval --experiment default --log logs/default/xelm/lm_eval.log
"""

from threadpoolctl import threadpool_limits

from lsnmt import paths as P
from lsnmt import record
from lsnmt.eval.metrics import write_metrics, xelm_ppl_rows
from lsnmt.runner.base import Job, run_stage
from lsnmt.xelm.config import XelmView
from lsnmt.xelm.empty_outputs import not_configured
from lsnmt.xelm.perplexities import evaluate

VIEW = XelmView


def _eval(view: XelmView, job: Job) -> None:
    exp, cfg = job.experiment, view.xelm
    out, rows = P.at(P.LM_EVAL, exp), {}
    if cfg is None:
        not_configured(exp, cfg, out)
    else:
        with threadpool_limits(limits=1):  # one BLAS thread: the same floats every run
            rows = xelm_ppl_rows(evaluate(cfg, exp, P.at(P.LM, exp), P.at(P.CLUSTER, exp), out))
        record.write(out)
    write_metrics(rows, P.at(P.METRICS, exp, stage="lm_eval"))


def main(argv: list[str] | None = None) -> None:
    run_stage("lm_eval", VIEW, _eval, argv)


if __name__ == "__main__":
    main()
