"""Stage ``encode``: token-id shards for every split (lsnmt.data.encode)."""

from lsnmt import paths as P
from lsnmt.data.config import DataExperiment
from lsnmt.data.encode import encode
from lsnmt.data.stage import run_data


def _encode(exp: DataExperiment) -> None:
    name = exp.name
    encode(exp, P.at(P.SPM, name), P.at(P.SAMPLED, name), P.at(P.PREPARED, name), P.at(P.BIN, name))


def main(argv: list[str] | None = None) -> None:
    run_data("encode", _encode, DataExperiment, argv)


if __name__ == "__main__":
    main()
