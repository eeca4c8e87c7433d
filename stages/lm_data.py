"""Stage ``lm_data``: each x-elm language's monolingual documents as text and token shards (lsnmt.xelm.lmdata).

    python -m stages.lm_data --experiment default --log logs/default/xelm/lm_data.log

Reads the data sections and ``xelm`` only (:class:`lsnmt.xelm.config.LMDataExperiment`).
"""

from lsnmt import paths as P
from lsnmt.data.stage import run_data
from lsnmt.xelm.config import LMDataExperiment
from lsnmt.xelm.empty_outputs import not_configured
from lsnmt.xelm.lmdata import build_lm_data


def _lm_data(exp: LMDataExperiment) -> None:
    out = P.at(P.LM, exp.name)
    if not not_configured(exp, out):
        build_lm_data(exp, P.at(P.PREPARED, exp.name), P.at(P.SPM, exp.name), out)


def main(argv: list[str] | None = None) -> None:
    run_data("lm_data", _lm_data, LMDataExperiment, argv)


if __name__ == "__main__":
    main()
