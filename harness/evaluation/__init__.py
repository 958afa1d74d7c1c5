"""Scoring with trec_eval semantics, the rows a claim reports, and the results directory
(written atomically, read back with validation)."""
