"""``python -m lsnmt.protocol > PROTOCOL.md`` (:mod:`lsnmt.protocol`)."""

from lsnmt.protocol import main

main()
