"""Tests of lsnmt.report: the papers' tables as data."""
