"""Server-side fusion: a harness fusion arm as a neural-search search pipeline.

The ``hybrid`` query returns each leg's hits; a ``phase_results_processors`` pipeline fuses
them on the node:

* RRF (Cormack, Clarke & Büttcher, SIGIR 2009): ``score-ranker-processor`` with
  ``combination {technique: rrf, rank_constant}``;
* normalization x combination (Fox & Shaw, TREC-2 1994): ``normalization-processor`` with
  ``normalization.technique`` ``min_max`` or ``l2`` and ``combination.technique``
  ``arithmetic_mean`` / ``geometric_mean`` / ``harmonic_mean`` with optional weights.

Differences from the harness's own fusion (:mod:`harness.retrieval.fusion`): 2.19 has no
``z_score`` (refused here); its ``min_max`` maps a leg's minimum to 0.001, not 0; the dense
leg is normalised on the k-NN score (``ip + 1`` for ``ip >= 0``: the same min-max and
ranks, a different ``l2`` norm).  The pipeline id is derived from the arm, so one arm is
always one pipeline.
"""

from __future__ import annotations

from harness.retrieval.backends.base import BackendError

SERVER_NORMALIZATIONS = ("min_max", "l2")


def pipeline_id(spec) -> str:
    return f"harness-{spec.arm_id}"


def pipeline_body(spec) -> dict:
    """The pipeline for one :class:`harness.retrieval.arms.FusionSpec`."""
    if spec.strategy == "rrf":
        processor = {"score-ranker-processor": {
            "combination": {"technique": "rrf", "rank_constant": int(spec.rank_constant)}}}
    else:
        if spec.normalization not in SERVER_NORMALIZATIONS:
            raise BackendError(
                f"server-side fusion: OpenSearch 2.19's normalization-processor has no "
                f"{spec.normalization!r} (it offers {sorted(SERVER_NORMALIZATIONS)}); run this "
                "arm with the harness's fusion (--opensearch-fusion harness)")
        combination = {"technique": spec.combination}
        if spec.weights is not None:
            combination["parameters"] = {"weights": [w / 100 for w in spec.weights]}
        processor = {"normalization-processor": {
            "normalization": {"technique": spec.normalization}, "combination": combination}}
    return {"description": f"retrieval-claims harness arm {spec.arm_id}",
            "phase_results_processors": [processor]}
