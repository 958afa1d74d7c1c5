"""The headless harness: records, scoring, retrieval arms, statistics, certificates, CLI.

The Python API (``docs/python-api.md``), backed by the code the commands run:

* ``harness.evaluate(run, qrels, ...)`` -> :class:`~harness.api.evaluation.Evaluation`
  (``harness score``);
* ``harness.compare({name: run}, qrels, ...)`` -> :class:`~harness.api.comparison.Comparison`
  (``harness score`` per run, then ``harness intervals --control``);
* ``harness.load(results_dir)`` -> an Evaluation read back from a results directory;
* ``harness.warehouse(path)`` -> read-only queries returning DataFrames.

They are imported on first use: ``import harness`` loads no model library, no database
driver and no dashboard.  Importing any module of the package has no side effects: no
connections, no downloads, no model loads.
"""

from __future__ import annotations

import importlib

_API = {
    "evaluate": "harness.api.evaluation",
    "load": "harness.api.evaluation",
    "Evaluation": "harness.api.evaluation",
    "compare": "harness.api.comparison",
    "Comparison": "harness.api.comparison",
    "warehouse": "harness.api.store",
    "Warehouse": "harness.api.store",
}

__all__ = sorted(_API)


def __getattr__(name: str):
    if name in _API:
        value = getattr(importlib.import_module(_API[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'harness' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_API))
