"""Stage ``spm``: train the shared sentencepiece model (lsnmt.data.spm).

Reads ``data`` and ``spm`` only (:class:`lsnmt.data.config.SpmView`)."""

from lsnmt import paths as P
from lsnmt.data.config import SpmView
from lsnmt.data.spm import train_spm
from lsnmt.runner.base import run_stage

VIEW = SpmView


def main(argv: list[str] | None = None) -> None:
    run_stage("spm", VIEW, lambda view, exp: train_spm(view, P.at(P.PREPARED, exp), P.at(P.SPM, exp)), argv)


if __name__ == "__main__":
    main()
