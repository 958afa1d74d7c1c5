"""Statistics that turn a number into a claim.

Modules (import the one you need; this package imports nothing on its own; the seeded
random streams they draw from are :mod:`harness.core.seeding`):

* :mod:`harness.stats.perquery`       - per-query values grouped like metric rows
* :mod:`harness.stats.intervals`      - bootstrap (percentile, BCa), paired deltas and ratios,
  Clopper-Pearson, and the ``intervals.json`` claim file
* :mod:`harness.stats.randomization`  - paired sign-flip test, Holm, ``comparisons.json``
* :mod:`harness.stats.inversion`      - the delta interval of that test at each verdict's Holm level
* :mod:`harness.stats.power`          - p-value floors, detectable effects, queries needed, audits
* :mod:`harness.stats.sequential`     - betting confidence sequences and :class:`QueryStream`
* :mod:`harness.stats.gate`           - the CI gate policies
* :mod:`harness.stats.agreement`      - do two corpora rank changes the same way?
* :mod:`harness.stats.markdown`       - tables for a reader (computing is kept separate)
"""
