"""Intervals: exact binomial, BCa coverage, paired ratio, and the intervals.json document."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binomtest

from harness.core.canonical import canonical_json
from harness.stats.intervals import (IntervalError, binary_interval, bootstrap_mean_interval,
                                     check_contains, clopper_pearson,
                                     paired_ratio_interval, percentile_bounds, resample_sums,
                                     row_intervals)
from harness.core.seeding import derive_rng


# --------------------------------------------------------------------------- Clopper-Pearson


def test_clopper_pearson_ten_of_ten_is_the_closed_form():
    lower, upper = clopper_pearson(10, 10)
    assert lower == pytest.approx(0.025 ** (1 / 10), abs=1e-12)  # (alpha/2)^(1/n)
    assert round(lower, 4) == 0.6915
    assert upper == 1.0


def test_clopper_pearson_zero_of_ten_mirrors_ten_of_ten():
    lower, upper = clopper_pearson(0, 10)
    assert lower == 0.0
    assert upper == pytest.approx(1 - 0.025 ** (1 / 10), abs=1e-12)


def test_clopper_pearson_matches_an_independent_implementation():
    for k, n in [(7, 10), (1, 3), (33, 50), (299, 300)]:
        ref = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
        lower, upper = clopper_pearson(k, n)
        assert lower == pytest.approx(ref.low, abs=1e-9)
        assert upper == pytest.approx(ref.high, abs=1e-9)


def test_binary_interval_refuses_a_value_that_is_not_zero_or_one():
    with pytest.raises(ValueError, match="0.5"):
        binary_interval([1, 0, 0.5])


def test_binary_interval_counts_successes():
    iv = binary_interval([1, 1, 1, 1, 1, 1, 1, 0, 0, 0])
    assert iv.estimate == 0.7
    assert (round(iv.lower, 3), round(iv.upper, 3)) == (0.348, 0.933)  # the reference's 7/10 row
    assert iv.method == "clopper-pearson"


# --------------------------------------------------------------------------- bootstrap


def test_bca_coverage_on_a_skewed_population_is_near_nominal():
    # Beta(0.5, 4): mean 0.5 / 4.5, heavily right-skewed, like a hard query set's nDCG.
    true_mean = 0.5 / 4.5
    rng = np.random.default_rng(20240611)
    reps, n = 400, 40
    hits_bca = hits_pct = 0
    for i in range(reps):
        sample = rng.beta(0.5, 4.0, size=n)
        bca = bootstrap_mean_interval(sample, resamples=2000, seed=i)
        pct = bootstrap_mean_interval(sample, resamples=2000, seed=i, method="percentile")
        hits_bca += bca.lower <= true_mean <= bca.upper
        hits_pct += pct.lower <= true_mean <= pct.upper
    coverage = hits_bca / reps
    # nominal 0.95; binomial sd at 400 reps is sqrt(0.95 * 0.05 / 400) = 0.011
    assert 0.95 - 3 * 0.011 <= coverage <= 0.95 + 3 * 0.011, coverage
    # and BCa's correction is not worse than the plain percentile interval on a skewed population
    assert hits_bca >= hits_pct - 4


@pytest.mark.parametrize("method, scipy_method", [("bca", "BCa"), ("percentile", "percentile")])
def test_bootstrap_bounds_agree_with_scipy_within_resampling_noise(method, scipy_method):
    from scipy.stats import bootstrap

    x = np.random.default_rng(5).beta(0.5, 4.0, size=60)
    ref = bootstrap((x,), np.mean, method=scipy_method, n_resamples=20000,
                    rng=np.random.default_rng(1)).confidence_interval
    ours = bootstrap_mean_interval(x, method=method, resamples=20000, seed=1)
    width = ref.high - ref.low
    assert ours.lower == pytest.approx(ref.low, abs=0.05 * width)
    assert ours.upper == pytest.approx(ref.high, abs=0.05 * width)


def test_interval_records_its_seed_and_resamples_and_is_reproducible():
    x = np.linspace(0, 1, 37) ** 3
    a = bootstrap_mean_interval(x, seed=5, resamples=1000)
    b = bootstrap_mean_interval(x, seed=5, resamples=1000)
    c = bootstrap_mean_interval(x, seed=6, resamples=1000)
    assert a == b
    assert (a.seed, a.resamples) == (5, 1000)
    assert (c.lower, c.upper) != (a.lower, a.upper)


def test_constant_values_give_a_degenerate_interval_at_the_value():
    iv = bootstrap_mean_interval([0.25] * 12)
    assert (iv.estimate, iv.lower, iv.upper, iv.degenerate) == (0.25, 0.25, 0.25, True)


def test_paired_delta_interval_is_the_bootstrap_of_the_differences():
    rng = np.random.default_rng(3)
    a = rng.random(50)
    b = a + 0.1
    iv = bootstrap_mean_interval(b - a, resamples=1000, seed=1)
    # every difference is exactly 0.1 (up to float): the interval collapses onto it
    assert iv.lower == pytest.approx(0.1) and iv.upper == pytest.approx(0.1)


def test_check_contains_raises_rather_than_widening():
    check_contains(0.5, 0.4, 0.6)
    with pytest.raises(IntervalError, match="outside its own interval"):
        check_contains(0.908, 0.712, 0.808)  # the reference's defective report


# --------------------------------------------------------------------------- paired ratio


def _imperfect_oracle(n=295, seed=11):
    rng = np.random.default_rng(seed)
    oracle = rng.uniform(0.3, 1.0, size=n)            # an oracle that misses often
    candidate = oracle * rng.uniform(0.6, 1.0, size=n)  # hard for one, hard for the other
    return candidate, oracle


def test_paired_ratio_estimate_lies_inside_its_interval_with_an_imperfect_oracle():
    candidate, oracle = _imperfect_oracle()
    iv = paired_ratio_interval(candidate, oracle, resamples=4000, seed=2)
    assert iv.estimate == pytest.approx(candidate.mean() / oracle.mean())
    assert iv.lower < iv.estimate < iv.upper


def test_the_reference_defect_an_interval_for_the_numerator_misses_the_ratio():
    candidate, oracle = _imperfect_oracle()
    ratio = candidate.mean() / oracle.mean()
    sums = resample_sums(candidate[None, :], 4000, derive_rng(2, "defect"))[0]
    lo, hi = percentile_bounds(sums / candidate.size, 0.95)  # bootstrapped the raw numerator
    with pytest.raises(IntervalError):
        check_contains(ratio, lo, hi, "numerator-only interval")


def test_with_a_perfect_oracle_the_defect_is_invisible():
    # oracle recall 1.0 everywhere: ratio == numerator mean, so both intervals coincide -
    # which is why synthetic tests with a perfect oracle never caught the defect
    candidate, _ = _imperfect_oracle()
    oracle = np.ones_like(candidate)
    ratio = paired_ratio_interval(candidate, oracle, resamples=2000, seed=4, method="percentile")
    sums = resample_sums(np.vstack([candidate, oracle]), 2000, derive_rng(4, "paired-ratio"))
    lo, hi = percentile_bounds(sums[0] / candidate.size, 0.95)
    assert (ratio.lower, ratio.upper) == pytest.approx((lo, hi), abs=1e-12)


def test_pairing_narrows_the_ratio_interval_when_queries_are_hard_for_both():
    candidate, oracle = _imperfect_oracle()
    paired = paired_ratio_interval(candidate, oracle, resamples=4000, seed=9, method="percentile")
    num = resample_sums(candidate[None, :], 4000, derive_rng(9, "num"))[0]
    den = resample_sums(oracle[None, :], 4000, derive_rng(9, "den"))[0]
    lo, hi = percentile_bounds(num / den, 0.95)  # separate indices: the correlation thrown away
    assert paired.width < 0.5 * (hi - lo)


def test_ratio_refuses_a_zero_denominator():
    with pytest.raises(IntervalError, match="denominator"):
        paired_ratio_interval([0.1, 0.2], [0.0, 0.0])


# --------------------------------------------------------------------------- intervals.json


def _doc_and_rows():
    # corpus alpha: 4 queries, two classes; corpus beta: 3 queries, no class
    values = {
        ("alpha", "a1"): ("lookup", 0.9, 1), ("alpha", "a2"): ("lookup", 0.2, 0),
        ("alpha", "a3"): ("summarize", 0.5, 1), ("alpha", "a4"): ("summarize", 0.0, 1),
        ("beta", "b1"): (None, 0.3, 1), ("beta", "b2"): (None, 0.6, 0), ("beta", "b3"): (None, 0.7, 1),
    }
    tiers = {"alpha": "A", "beta": "B"}
    per_query = []
    for (corpus, qid), (cls, ndcg, s1) in sorted(values.items()):
        for measure, v in (("nDCG@10", ndcg), ("Success@1", s1)):
            per_query.append({"corpus": corpus, "tier": tiers[corpus], "query_class": cls,
                              "query_id": qid, "measure": measure, "value": float(v), "answered": True})

    def row(corpus, cls, n, ndcg, s1, tier):
        return {"corpus": corpus, "tier": tier, "query_class": cls, "n": n,
                "metrics": {"nDCG@10": ndcg, "Success@1": s1}, "queries_unanswered": 0,
                "queries_dropped_unjudgeable": 0}

    rows = [row("alpha", "lookup", 2, (0.9 + 0.2) / 2, 1 / 2, "A"),
            row("alpha", "summarize", 2, (0.5 + 0.0) / 2, 2 / 2, "A"),
            row("alpha", "all", 4, (0.9 + 0.2 + 0.5 + 0.0) / 4, 3 / 4, "A"),
            row("beta", "all", 3, (0.3 + 0.6 + 0.7) / 3, 2 / 3, "B"),
            row("alpha+beta", "all", 7, (0.9 + 0.2 + 0.5 + 0.0 + 0.3 + 0.6 + 0.7) / 7, 5 / 7, "B")]
    doc = {"schema_version": 1, "control_name": "hand", "rows": rows, "corpora": []}
    return doc, per_query


def test_row_intervals_covers_every_row_with_the_right_method():
    doc, per_query = _doc_and_rows()
    out = row_intervals(doc, per_query, resamples=500)
    keys = [(r["corpus"], r["query_class"], r["measure"]) for r in out["rows"]]
    assert keys == sorted(keys) and len(keys) == 10
    by_key = {(r["corpus"], r["query_class"], r["measure"]): r for r in out["rows"]}
    pooled = by_key[("alpha+beta", "all", "Success@1")]
    assert pooled["method"] == "clopper-pearson" and pooled["tier"] == "B" and pooled["n"] == 7
    ref = binomtest(5, 7).proportion_ci(method="exact")
    assert (pooled["lower"], pooled["upper"]) == pytest.approx((ref.low, ref.high), abs=1e-9)
    assert pooled["seed"] is None and pooled["resamples"] is None
    ndcg = by_key[("beta", "all", "nDCG@10")]
    assert ndcg["method"] == "bca" and ndcg["seed"] == 0 and ndcg["resamples"] == 500
    assert ndcg["estimate"] == pytest.approx((0.3 + 0.6 + 0.7) / 3)
    assert ndcg["lower"] <= ndcg["estimate"] <= ndcg["upper"]
    assert out["kind"] == "intervals" and out["seed"] == 0


def test_row_intervals_is_deterministic_and_each_row_has_its_own_stream():
    doc, per_query = _doc_and_rows()
    first = canonical_json(row_intervals(doc, per_query, resamples=500, seed=3))
    again = canonical_json(row_intervals(doc, list(reversed(per_query)), resamples=500, seed=3))
    assert first == again
    only_ndcg = row_intervals(doc, per_query, resamples=500, seed=3, measures=["nDCG@10"])
    both = {(r["corpus"], r["query_class"], r["measure"]): r
            for r in row_intervals(doc, per_query, resamples=500, seed=3)["rows"]}
    for r in only_ndcg["rows"]:
        assert r == both[(r["corpus"], r["query_class"], r["measure"])]


def test_row_intervals_refuses_per_query_values_from_another_run():
    doc, per_query = _doc_and_rows()
    changed = [dict(r) for r in per_query]
    changed[0]["value"] = 0.95
    with pytest.raises(ValueError, match="differs from metrics.json"):
        row_intervals(doc, changed, resamples=500)
    with pytest.raises(ValueError, match="6 per-query entries but metrics.json says n = 7"):
        row_intervals(doc, [r for r in per_query if r["query_id"] != "b3"], resamples=500)


# --------------------------------------------------------------------------- file-level measures


def test_file_measures_are_binary_exactly_when_their_base_is():
    from harness.pipeline.levels import FILE_PREFIX as BENCH_PREFIX
    from harness.stats.intervals import FILE_PREFIX, is_binary_measure

    assert FILE_PREFIX == BENCH_PREFIX  # the prefix the bench writes
    assert is_binary_measure("file:Success@1") and is_binary_measure("file:Success@5")
    assert not is_binary_measure("file:R@10") and not is_binary_measure("file:MRR")
    assert is_binary_measure("Success@1") and not is_binary_measure("nDCG@10")
    assert not is_binary_measure("file:unknown") and not is_binary_measure("unknown")


def test_a_file_measure_at_ten_of_ten_gets_clopper_pearson_not_a_zero_width_bootstrap():
    # ten queries, every one's gold file ranked first: a bootstrap would give [1, 1]
    per_query = [{"corpus": "c", "tier": "A", "query_class": None, "query_id": f"q{i}",
                  "measure": m, "value": v, "answered": True}
                 for i in range(10) for m, v in (("file:Success@1", 1.0), ("file:MRR", 1.0 - i / 20))]
    doc = {"schema_version": 1, "control_name": "files", "corpora": [], "rows": [
        {"corpus": "c", "tier": "A", "query_class": "all", "n": 10,
         "metrics": {"file:Success@1": 1.0, "file:MRR": 1.0 - sum(range(10)) / 200},
         "queries_unanswered": 0, "queries_dropped_unjudgeable": 0}]}
    rows = {r["measure"]: r for r in row_intervals(doc, per_query, resamples=500)["rows"]}
    s1 = rows["file:Success@1"]
    assert s1["method"] == "clopper-pearson" and not s1["degenerate"]
    assert s1["lower"] == pytest.approx(0.025 ** (1 / 10), abs=1e-12) and s1["upper"] == 1.0
    assert rows["file:MRR"]["method"] == "bca"  # a non-binary file measure keeps the bootstrap


def test_ci_lower_gate_on_a_file_measure_uses_the_exact_bound():
    from harness.stats.gate import GateSpec, run_gate
    from harness.stats.sequential import QueryStream

    stream = QueryStream.from_values({("c", f"q{i}"): 1.0 for i in range(10)})
    spec = GateSpec(measure="file:Success@1", threshold=0.8, corpus="c", query_class="all",
                    stream=stream, progress=False)
    result = run_gate("ci-lower", spec)
    assert result.verdict == "fail" and result.lower == pytest.approx(0.025 ** (1 / 10))
    assert result.bound.startswith("clopper-pearson")
