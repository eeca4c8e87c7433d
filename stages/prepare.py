"""Stage ``prepare``: normalise, filter, deduplicate and tag the raw corpora (lsnmt.data.prepare)."""

from lsnmt import paths as P
from lsnmt.data.prepare import prepare
from lsnmt.data.stage import run_data


def main(argv: list[str] | None = None) -> None:
    run_data("prepare", lambda exp: prepare(exp, P.at(P.RAW, exp.name), P.at(P.PREPARED, exp.name)), argv)


if __name__ == "__main__":
    main()
