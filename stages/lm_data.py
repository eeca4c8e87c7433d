"""Stage ``lm_data``: each x-elm language's monolingual documents as text and token shards (lsnmt.xelm.lmdata).

    python -m stages.lm_data --experiment default --log logs/default/xelm/lm_data.log

Reads ``data``, ``spm`` and ``lm_data`` only (:class:`lsnmt.xelm.data_config.LMDataView`): not ``xelm``, the LMs'
training settings.
"""

from lsnmt import paths as P
from lsnmt.runner.base import Job, run_stage
from lsnmt.xelm.data_config import LMDataView
from lsnmt.xelm.empty_outputs import not_configured
from lsnmt.xelm.lmdata import build_lm_data

VIEW = LMDataView


def _lm_data(view: LMDataView, job: Job) -> None:
    exp = job.experiment
    out, lm = P.at(P.LM, exp), view.lm_data
    if lm is None:
        not_configured(exp, lm, out)
    else:
        build_lm_data(view.data, view.spm, lm, P.at(P.PREPARED, exp), P.at(P.SPM, exp), out)


def main(argv: list[str] | None = None) -> None:
    run_stage("lm_data", VIEW, _lm_data, argv)


if __name__ == "__main__":
    main()
