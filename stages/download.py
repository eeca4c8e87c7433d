"""Stage ``download``: fetch every corpus of the experiment into the raw layout (lsnmt.data.download)."""

from lsnmt.data import layout
from lsnmt.data.download import download
from lsnmt.runner.stage import run


def main(argv: list[str] | None = None) -> None:
    run("download", lambda exp: download(exp, layout.raw_dir(exp.name)), argv)


if __name__ == "__main__":
    main()
