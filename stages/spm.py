"""Stage ``spm``: train the shared sentencepiece model (lsnmt.data.spm).

Reads ``data`` and ``spm`` only (:class:`lsnmt.data.config.SpmView`)."""

from lsnmt import paths as P
from lsnmt.data.config import SpmView
from lsnmt.data.spm import train_spm
from lsnmt.runner.base import Job, run_stage

VIEW = SpmView


def _spm(view: SpmView, job: Job) -> dict:
    return train_spm(view, P.at(P.PREPARED, job.experiment), P.at(P.SPM, job.experiment))


def main(argv: list[str] | None = None) -> None:
    run_stage("spm", VIEW, _spm, argv)


if __name__ == "__main__":
    main()
