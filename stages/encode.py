"""Stage ``encode``: token-id shards for every split (lsnmt.data.encode).

Reads ``data`` and ``encode`` only (:class:`lsnmt.data.config.EncodeView`)."""

from lsnmt import paths as P
from lsnmt.data.config import EncodeView
from lsnmt.data.encode import encode
from lsnmt.runner.base import Job, run_stage

VIEW = EncodeView


def _encode(view: EncodeView, job: Job) -> None:
    exp = job.experiment
    encode(view, P.at(P.SPM, exp), P.at(P.SAMPLED, exp), P.at(P.PREPARED, exp), P.at(P.BIN, exp))


def main(argv: list[str] | None = None) -> None:
    run_stage("encode", VIEW, _encode, argv)


if __name__ == "__main__":
    main()
