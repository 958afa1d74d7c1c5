"""What every rendered table agrees on about a cell: whether a value is held, and the one
precision of a table's interval bounds (the screen, the exports and the LaTeX)."""

from __future__ import annotations

import math


def missing(value) -> bool:
    """None, NaN (of any float type) or pandas' NA / NaT: a value the warehouse does not hold."""
    if value is None or type(value).__name__ in ("NAType", "NaTType"):
        return True
    try:
        return math.isnan(value)
    except TypeError:  # not a number: text, a list ...
        return False


def interval_precision(bounds) -> int:
    """One interval precision for a whole table: 2 decimals when every interval in it is at
    least 0.02 wide, 4 when any is narrower (so no bound is rounded onto its neighbour)."""
    widths = [float(hi) - float(lo) for lo, hi in bounds if not (missing(lo) or missing(hi))]
    return 4 if any(w < 0.02 for w in widths) else 2
