"""Stage ``prepare``: normalise, filter, deduplicate and tag the raw corpora (lsnmt.data.prepare)."""

from lsnmt.data import layout
from lsnmt.data.prepare import prepare
from lsnmt.runner.stage import run


def main(argv: list[str] | None = None) -> None:
    run("prepare", lambda exp: prepare(exp, layout.raw_dir(exp.name), layout.prepared_dir(exp.name)), argv)


if __name__ == "__main__":
    main()
