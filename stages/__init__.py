"""The stage entry points, ``python -m stages.<name>``, one per row of the stage table (lsnmt/graph/table.py)."""
