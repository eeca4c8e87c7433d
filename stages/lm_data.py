"""Stage ``lm_data``: each x-elm language's monolingual documents as text and token shards (lsnmt.xelm.lmdata).

    python -m stages.lm_data --experiment default --log logs/default/xelm/lm_data.log
"""

from lsnmt import paths as P
from lsnmt.runner.stage import run
from lsnmt.xelm import layout as xl
from lsnmt.xelm.lmdata import build_lm_data
from lsnmt.xelm.stage import not_configured


def _lm_data(exp) -> None:
    out = xl.lm_dir(exp.name)
    if not not_configured(exp, out):
        build_lm_data(exp, P.at(P.PREPARED, exp.name), P.at(P.SPM, exp.name), out)


def main(argv: list[str] | None = None) -> None:
    run("lm_data", _lm_data, argv)


if __name__ == "__main__":
    main()
