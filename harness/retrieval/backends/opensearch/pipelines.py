"""Server-side fusion: a harness fusion arm as a neural-search search pipeline.

The ``hybrid`` query returns each leg's hits; a ``phase_results_processors`` pipeline fuses
them on the node:

* RRF (Cormack, Clarke & Büttcher, SIGIR 2009): ``score-ranker-processor`` with
  ``combination {technique: rrf, rank_constant}``;
* normalization x combination (Fox & Shaw, TREC-2 1994): ``normalization-processor`` with
  ``normalization.technique`` ``min_max`` or ``l2`` and ``combination.technique``
  ``arithmetic_mean`` / ``geometric_mean`` / ``harmonic_mean`` with optional weights.

Differences from the harness's own fusion (:mod:`harness.retrieval.fusion`), measured in
tests/harness/retrieval/opensearch/test_hybrid.py:

* RRF: the same rankings, but 2.19's processor ignores ``rank_constant`` and always uses 60
  (neural-search issue 1370, fixed after 2.19), so any other constant is refused on 2.19;
* ``min_max``: a leg's minimum becomes 0.001, not 0 (the only difference for the
  arithmetic mean);
* geometric and harmonic means skip a leg where the document scored 0 instead of giving 0,
  so single-leg hits are not annihilated: a different arm;
* ``l2`` normalises the dense leg's k-NN score (``ip + 1``), not the inner product;
* no ``z_score`` in 2.19 (refused).

The pipeline id is derived from the arm, so one arm is always one pipeline.
"""

from __future__ import annotations

from harness.retrieval.backends.base import BackendError

SERVER_NORMALIZATIONS = ("min_max", "l2")


def pipeline_id(spec) -> str:
    return f"harness-{spec.arm_id}"


def pipeline_body(spec, server_version: str) -> dict:
    """The pipeline for one :class:`harness.retrieval.arms.FusionSpec` on a node of
    ``server_version``."""
    if spec.strategy == "rrf":
        if server_version.startswith("2.19.") and spec.rank_constant != 60:
            raise BackendError(
                f"server-side fusion: OpenSearch {server_version}'s score-ranker-processor "
                f"ignores rank_constant and would compute RRF-60, not RRF-{spec.rank_constant} "
                "(neural-search issue 1370); run this arm with the harness's fusion "
                "(--opensearch-fusion harness)")
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
