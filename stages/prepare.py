"""Stage ``prepare``: normalise, filter, deduplicate and tag the raw corpora (lsnmt.data.prepare).

Reads ``data`` and ``prepare`` only (:class:`lsnmt.data.config.PrepareView`)."""

from lsnmt import paths as P
from lsnmt.data.config import PrepareView
from lsnmt.data.prepare import prepare
from lsnmt.runner.base import Job, run_stage

VIEW = PrepareView


def _prepare(view: PrepareView, job: Job) -> dict:
    return prepare(view, P.at(P.RAW, job.experiment), P.at(P.PREPARED, job.experiment))


def main(argv: list[str] | None = None) -> None:
    run_stage("prepare", VIEW, _prepare, argv)


if __name__ == "__main__":
    main()
