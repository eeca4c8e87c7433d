"""Stage ``spm``: train the shared sentencepiece model (lsnmt.data.spm)."""

from lsnmt import paths as P
from lsnmt.data.spm import train_spm
from lsnmt.data.stage import run_data


def main(argv: list[str] | None = None) -> None:
    run_data("spm", lambda exp: train_spm(exp, P.at(P.PREPARED, exp.name), P.at(P.SPM, exp.name)), argv)


if __name__ == "__main__":
    main()
