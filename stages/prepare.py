"""Stage ``prepare``: normalise, filter, deduplicate and tag the raw corpora (lsnmt.data.prepare).

Reads ``data`` and ``prepare`` only (:class:`lsnmt.data.config.PrepareView`)."""

from lsnmt import paths as P
from lsnmt.data.config import PrepareView
from lsnmt.data.prepare import prepare
from lsnmt.runner.base import run_stage

VIEW = PrepareView


def main(argv: list[str] | None = None) -> None:
    run_stage("prepare", VIEW, lambda view, exp: prepare(view, P.at(P.RAW, exp), P.at(P.PREPARED, exp)), argv)


if __name__ == "__main__":
    main()
