"""Stage ``spm``: train the shared sentencepiece model (lsnmt.data.spm)."""

from lsnmt.data import layout
from lsnmt.data.spm import train_spm
from lsnmt.runner.stage import run


def main(argv: list[str] | None = None) -> None:
    run("spm", lambda exp: train_spm(exp, layout.prepared_dir(exp.name), layout.spm_dir(exp.name)), argv)


if __name__ == "__main__":
    main()
