"""The pipeline's stages, one module per row of the stage table (``lsnmt/graph/stages.py``):
``python -m stages.<name>``.

Run so (``sys.argv[0]`` is ``-m`` while Python imports this package, before the stage's module), a stage notes
SIGTERM / SIGUSR1 from its very start: its imports take seconds (torch), and a signal then would kill it outright;
its handler stops it cleanly, exit 128 + the signal, once its work begins (:func:`lsnmt.runner.base.guarded`). Imported
otherwise (the tests), it changes nothing.
"""

import sys

if sys.argv[:1] == ["-m"]:
    from lsnmt.stops import note_stop_signals

    note_stop_signals()
