"""The arm pipeline: one retrieval arm over one or more corpora, retrieve -> score -> certify
-> write a results directory (the ``harness bench`` and ``harness sweep`` commands, the demo).

Modules: :mod:`~harness.pipeline.config` (the validated configuration),
:mod:`~harness.pipeline.runner` (one run), :mod:`~harness.pipeline.gated` (query by query
until a gate decides), :mod:`~harness.pipeline.sweep` (a family of arms over one index),
:mod:`~harness.pipeline.levels` (file-level measures), :mod:`~harness.pipeline.latency`,
:mod:`~harness.pipeline.systems` (what a run against a deployed system adds).

Entry points: :class:`harness.pipeline.config.ArmConfig` (validated configuration) and
:func:`harness.pipeline.runner.run_arm`.  Importing this package loads no model.
"""

from harness.pipeline.config import ArmConfig, from_args

__all__ = ["ArmConfig", "from_args", "run_arm"]


def run_arm(cfg, corpora=None):
    from harness.pipeline.runner import run_arm as _run

    return _run(cfg, corpora)
