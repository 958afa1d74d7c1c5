"""The Python API behind ``harness.evaluate``, ``harness.compare``, ``harness.load`` and
``harness.warehouse`` (``docs/python-api.md``).

Every number comes from the code the commands run: :mod:`harness.evaluation.scored_run`
(``harness score``) and :mod:`harness.evaluation.family` (``harness intervals``).  What an
object shows is what its files hold, read back (floats at the stored 10 decimals), so a
notebook number and a command-line number cannot differ.
"""
