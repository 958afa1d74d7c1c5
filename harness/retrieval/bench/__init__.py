"""``harness bench``: run one retrieval arm over one or more corpora into a results dir.

Entry points: :class:`harness.retrieval.bench.config.BenchConfig` (validated configuration) and
:func:`harness.retrieval.bench.runner.run_bench`.  Importing this package loads no model.
"""

from harness.retrieval.bench.config import BenchConfig, from_args

__all__ = ["BenchConfig", "from_args", "run_bench"]


def run_bench(cfg, corpora=None):
    from harness.retrieval.bench.runner import run_bench as _run

    return _run(cfg, corpora)
