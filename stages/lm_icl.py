"""Stage ``lm_icl``: zero- and few-shot XNLI, XStoryCloze and PAWS-X with the x-elm models (lsnmt.xelm.icl).

    python -m stages.lm_icl --experiment default --log logs/default/xelm/lm_icl.log

Reads ``download`` and ``xelm`` only (:class:`lsnmt.xelm.config.IclView`). Datasets come from ``xelm.icl.path``
(downloaded there first with ``xelm.icl.download``); a task whose data is absent is recorded as "not run" in
``summary.json`` with what to fetch.
"""

from threadpoolctl import threadpool_limits

from lsnmt import paths as P
from lsnmt import record
from lsnmt.eval.metrics import write_metrics, xelm_icl_rows
from lsnmt.runner.base import Job, run_stage
from lsnmt.xelm.config import IclView
from lsnmt.xelm.empty_outputs import not_configured
from lsnmt.xelm.icl import run_icl

VIEW = IclView


def _icl(view: IclView, job: Job) -> None:
    exp, cfg = job.experiment, view.xelm
    out, rows = P.at(P.ICL, exp), {}
    if cfg is None:
        not_configured(exp, cfg, out)
    else:
        with threadpool_limits(limits=1):  # one BLAS thread: the same floats every run
            rows = xelm_icl_rows(run_icl(cfg, view.download, exp, P.at(P.LM, exp), P.at(P.CLUSTER, exp), out))
        record.write(out)
    write_metrics(rows, P.at(P.METRICS, exp, stage="lm_icl"))


def main(argv: list[str] | None = None) -> None:
    run_stage("lm_icl", VIEW, _icl, argv)


if __name__ == "__main__":
    main()
