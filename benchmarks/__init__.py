"""``make bench``: every ``benchmarks/bench_*.py`` module, ratios measured side by side.

Each module defines ``run(quick: bool) -> list[dict]``; a row is
``{"benchmark", "ours", "baseline", "unit", "ratio", "target", "ok"}``.  Timings are
printed, never asserted: these machines are noisy, ratios measured in one run are not.
"""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def qmsum_val() -> Path | None:
    """The QMSum validation split (``$QMSUM_VAL``, else beside the repository), or None."""
    path = Path(os.environ.get("QMSUM_VAL") or REPO.parent / "shared" / "data" / "qmsum-val")
    return path if (path / "data").is_dir() else None


def row(label, ours, baseline, unit, ratio, target, ok) -> dict:
    """One printed row (module docstring); the ratio to three decimals."""
    return {"benchmark": label, "ours": ours, "baseline": baseline, "unit": unit,
            "ratio": None if ratio is None else round(ratio, 3), "target": target, "ok": ok}
