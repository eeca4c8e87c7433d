"""Stage ``lm_icl``: zero- and few-shot XNLI, XStoryCloze and PAWS-X with the x-elm models (lsnmt.xelm.icl).

    python -m stages.lm_icl --experiment default --log logs/default/xelm/lm_icl.log

Datasets come from ``xelm.icl.path`` (downloaded there first with ``xelm.icl.download``); a task whose data
is absent is recorded as "not run" in ``summary.json`` with what to fetch.
"""

from threadpoolctl import threadpool_limits

from lsnmt import paths as P
from lsnmt import record
from lsnmt.eval.metrics import write_metrics, xelm_icl_rows
from lsnmt.runner.stage import run
from lsnmt.xelm import layout as xl
from lsnmt.xelm.icl import run_icl
from lsnmt.xelm.stage import not_configured


def _icl(exp) -> None:
    out, rows = xl.icl_dir(exp.name), {}
    if not not_configured(exp.name, exp.lm_data, out):
        with threadpool_limits(limits=1):  # one BLAS thread: the same floats every run
            rows = xelm_icl_rows(run_icl(exp, xl.lm_dir(exp.name), xl.cluster_dir(exp.name), out))
        record.write(out)
    write_metrics(rows, P.at(P.METRICS, exp.name, stage="lm_icl"))


def main(argv: list[str] | None = None) -> None:
    run("lm_icl", _icl, argv)


if __name__ == "__main__":
    main()
