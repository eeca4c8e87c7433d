"""Stage ``prepare``: normalise, filter, deduplicate and tag the raw corpora (lsnmt.data.prepare)."""

from lsnmt import paths as P
from lsnmt.data.config import DataExperiment
from lsnmt.data.prepare import prepare
from lsnmt.data.stage import run_data


def main(argv: list[str] | None = None) -> None:
    def one(exp: DataExperiment) -> dict:
        return prepare(exp, P.at(P.RAW, exp.name), P.at(P.PREPARED, exp.name))

    run_data("prepare", one, DataExperiment, argv)


if __name__ == "__main__":
    main()
