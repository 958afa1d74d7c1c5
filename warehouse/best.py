"""Which run a table marks best: one definition for the exports, the LaTeX and Markdown
renderers, the Results page and the tie test (:func:`warehouse.exports.mark_ties`)."""

from __future__ import annotations


def best_of(rows):
    """The one definition of the best run a table marks: per corpus x group x class x
    measure with two runs or more, the rows whose displayed mean (``value``, over all the
    run's queries) is the highest (every measure here is higher-is-better).  A boolean
    Series on ``rows``' index; the exports, LaTeX, Markdown and the Results page mark these,
    and :func:`warehouse.exports.mark_ties` tests the others against the first of them."""
    keys = [k for k in ("corpus", "group", "class", "measure") if k in rows.columns]
    if rows.empty:
        return rows["value"] != rows["value"]
    top = rows.groupby(keys)["value"].transform("max")
    count = rows.groupby(keys)["value"].transform("count")
    return (rows["value"] == top) & (count > 1)


#: what the tie test says of a row (``tie``): the best itself; tied with it; separated from it
#: (Holm p <= alpha); borderline (within Monte Carlo error of alpha); not tested (the slice
#: has two runs or more but no query every run scored, or no per-query values); '' for a
#: slice of one run
BEST, TIED, NOT_TIED, BORDERLINE, NOT_TESTED = "best", "tied", "not tied", "borderline", \
    "not tested"
TIE_STATES = (BEST, TIED, NOT_TIED, BORDERLINE, NOT_TESTED, "")
