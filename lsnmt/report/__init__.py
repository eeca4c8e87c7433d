"""Reporting: the papers' printed tables (:mod:`lsnmt.report.paper`) and, later, ours beside them."""
