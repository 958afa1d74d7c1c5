"""``make bench``: every ``benchmarks/bench_*.py`` module, ratios measured side by side.

Each module defines ``run(quick: bool) -> list[dict]``; a row is
``{"benchmark", "ours", "baseline", "unit", "ratio", "target", "ok"}``.  Timings are
printed, never asserted: these machines are noisy, ratios measured in one run are not.
"""
