"""``python -m lsnmt``: the ``lsnmt`` command (:mod:`lsnmt.cli`)."""

from lsnmt.cli import main

main()
