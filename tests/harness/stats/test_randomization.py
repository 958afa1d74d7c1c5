"""Paired randomization test, floors, Holm, and comparisons.json."""

from __future__ import annotations

import itertools
import json
from fractions import Fraction

import numpy as np
import pytest

from harness.cli import main
from harness.core.canonical import canonical_json
from harness.evaluation.runs import compare_runs
from harness.claims.comparisons import family_expectations, holm, holm_floors, verdict
from harness.stats.randomization import (exact_p, minimum_discordant, monte_carlo_p, p_floor,
                                         paired_tests,
                                         provenance_differences)
from harness.core.seeding import derive_rng
from tests.harness.stats.builders import make_results


def paired_randomization_test(control, candidate, *, permutations=10000, seed=0):
    """One paired sign-flip test of ``candidate`` against ``control`` (same query order)."""
    ctl = np.asarray(control, dtype=np.float64)
    cand = np.asarray(candidate, dtype=np.float64)
    return paired_tests(ctl, cand[None, :], permutations=permutations,
                        rng=derive_rng(seed, "randomization"))[0]


def brute_force_p(diffs):
    """Every one of the 2^n sign assignments of all n differences (zeros included), in Python."""
    observed = abs(sum(diffs))
    hits = total = 0
    for signs in itertools.product((1, -1), repeat=len(diffs)):
        total += 1
        if abs(sum(s * d for s, d in zip(signs, diffs))) >= observed - 1e-12:
            hits += 1
    return hits / total


@pytest.mark.parametrize("seed", range(8))
def test_exact_p_equals_brute_force_enumeration(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 12))
    # per-query values on a coarse grid so ties and zero differences occur, as with real metrics
    control = rng.integers(0, 5, size=n) / 4
    candidate = rng.integers(0, 5, size=n) / 4
    test = paired_randomization_test(control, candidate)
    assert test.method == "exact"
    assert test.p == pytest.approx(brute_force_p((candidate - control).tolist()), abs=1e-12)


def test_three_discordant_pairs_cannot_be_significant():
    control = [0.0] * 10
    candidate = [1.0, 1.0, 1.0] + [0.0] * 7  # seven ties, three improvements
    test = paired_randomization_test(control, candidate)
    assert test.discordant == 3
    assert test.p == 2 / 2 ** 3 == 0.25  # the identity and its mirror of 8 assignments
    assert test.p_floor == 0.25
    assert exact_p([1.0, 1.0, 1.0, 0.0, 0.0]) == 0.25
    assert verdict(test.p, test.p_floor, 0.05) == "cannot be significant"


def test_not_significant_is_distinct_from_cannot_be_significant():
    control = [0.0] * 10
    candidate = [1, -1, 1, -1, 1, -1, 1, 1, -1, 1]  # ten discordant, net +2
    test = paired_randomization_test(control, candidate)
    assert test.p_floor == 2.0 ** (1 - 10)
    assert verdict(test.p, test.p_floor, 0.05) == "not significant"
    assert verdict(0.01, test.p_floor, 0.05) == "significant"


def test_floor_and_minimum_discordant():
    assert p_floor(0) == 1.0
    assert p_floor(300) == pytest.approx(9.82e-91, rel=1e-3)  # the reference's SciFact floor
    # 2^(1-5) = 0.0625 > 0.05 >= 2^(1-6) = 0.03125
    assert minimum_discordant(0.05) == 6
    assert minimum_discordant(0.01) == 8  # 2^-6 = 0.0156 > 0.01 >= 2^-7
    # four arms share the Holm multiplier: 4 x 2^(1-7) = 0.0625 > 0.05 >= 4 x 2^(1-8) = 0.03125
    assert minimum_discordant(0.05, family_size=4) == 8
    assert minimum_discordant(0.05, family_size=1) == minimum_discordant(0.05)
    with pytest.raises(ValueError, match="family_size"):
        minimum_discordant(0.05, family_size=0)


def test_monte_carlo_agrees_with_exact_enumeration_beyond_the_exact_limit():
    rng = np.random.default_rng(5)
    d = rng.normal(0.05, 0.2, size=18)  # 18 discordant: Monte Carlo
    bits = (np.arange(2 ** 18)[:, None] >> np.arange(18)) & 1
    exact = np.mean(np.abs((1 - 2 * bits) @ d) >= abs(d.sum()) - 1e-12)
    test = paired_randomization_test(np.zeros(18), d, permutations=20000, seed=1)
    assert test.method == "monte-carlo" and test.permutations == 20000
    assert test.p == pytest.approx(exact, abs=4 * np.sqrt(exact * (1 - exact) / 20000) + 1 / 20001)
    b = test.p * 20001 - 1  # p = (b + 1) / (N + 1) with b a whole count
    assert b == pytest.approx(round(b), abs=1e-6)


def test_monte_carlo_never_returns_zero():
    d = np.full((40, 1), 0.5)  # every query improves: only the identity is as extreme
    p = monte_carlo_p(d, 999, np.random.default_rng(0))
    assert p[0] == pytest.approx(1 / 1000)


def test_holm_matches_r_p_adjust():
    # R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm")
    # sorted 0.005*4 = 0.02, 0.01*3 = 0.03, 0.03*2 = 0.06, 0.04*1 = 0.04 -> running max 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # R: p.adjust(c(0.01, 0.02, 0.03, 0.04, 0.05), "holm") = 0.05 0.08 0.09 0.09 0.09
    assert holm([0.01, 0.02, 0.03, 0.04, 0.05]) == pytest.approx([0.05, 0.08, 0.09, 0.09, 0.09])
    assert holm([0.6, 0.9]) == [1.0, 1.0]  # capped at 1
    assert holm([]) == []


def test_holm_keeps_family_wise_error_under_the_null():
    rng = np.random.default_rng(2007)
    sims, arms, n, alpha = 400, 5, 25, 0.05
    any_raw = any_holm = 0
    for s in range(sims):
        control = rng.random(n)
        # null: each arm differs from the control by symmetric noise (exchangeable signs)
        candidates = control[None, :] + rng.normal(0, 0.1, size=(arms, n))
        tests = paired_tests(control, candidates, permutations=500, rng=np.random.default_rng(s))
        raw = [t.p for t in tests]
        any_raw += min(raw) <= alpha
        any_holm += min(holm(raw)) <= alpha
    fwer = any_holm / sims
    assert fwer <= alpha + 2 * np.sqrt(alpha * (1 - alpha) / sims)
    # the negative control: uncorrected, five looks reject far more often (1 - 0.95^5 = 0.23)
    assert any_raw / sims > 0.15


# --------------------------------------------------------------------------- comparisons.json


def _q(values):
    """{query_id: (class, {"nDCG@10": v})}"""
    return {q: (cls, {"nDCG@10": v}) for q, (cls, v) in values.items()}


def _runs(tmp_path):
    ctl = {"alpha": _q({"a1": ("lookup", 0.5), "a2": ("lookup", 0.2), "a3": ("summarize", 0.1),
                        "a4": ("summarize", 0.4)}),
           "beta": _q({"b1": (None, 0.3), "b2": (None, 0.3), "b3": (None, 0.6)})}
    # arm "up": +0.1 on a1, a2, a3; nothing else moves
    up = {"alpha": _q({"a1": ("lookup", 0.6), "a2": ("lookup", 0.3), "a3": ("summarize", 0.2),
                       "a4": ("summarize", 0.4)}),
          "beta": ctl["beta"]}
    # arm "down": -0.2 on b1 only
    down = {"alpha": ctl["alpha"],
            "beta": _q({"b1": (None, 0.1), "b2": (None, 0.3), "b3": (None, 0.6)})}
    return (make_results(tmp_path, "control", ctl), make_results(tmp_path, "up", up),
            make_results(tmp_path, "down", down))


def test_compare_runs_pairs_queries_per_corpus_class_and_pooled(tmp_path):
    ctl, up, down = _runs(tmp_path)
    doc = compare_runs(ctl, [up, down], ["nDCG@10"], seed=0, permutations=1000, resamples=500)
    assert doc["kind"] == "comparisons" and doc["control"]["name"] == "control"
    rows = {(r["corpus"], r["query_class"], r["arm"]): r for r in doc["rows"]}
    assert sorted({(c, k) for c, k, _ in rows}) == [
        ("alpha", "all"), ("alpha", "lookup"), ("alpha", "summarize"), ("alpha+beta", "all"),
        ("beta", "all")]
    r = rows[("alpha", "all", "up")]
    assert r["n"] == 4 and r["discordant"] == 3 and r["improved"] == 3
    assert r["delta"] == pytest.approx(3 * 0.1 / 4)
    assert r["p"] == 0.25 and r["p_floor"] == 0.25 and r["verdict"] == "cannot be significant"
    # Holm over the two arms on (alpha, all): "down" is flat there (p = 1), so 0.25 * 2 = 0.5
    assert r["p_holm"] == pytest.approx(0.5)
    # its Holm floor: first of two at 0.25 gives 2 x 0.25; behind "down" (floor 1) gives 2
    assert r["p_holm_floor"] == pytest.approx(0.5) and r["family_size"] == 2
    assert doc["family_size"] == 2 and [a["name"] for a in doc["arms"]] == ["down", "up"]
    assert rows[("alpha", "all", "down")]["p"] == 1.0 and rows[("alpha", "all", "down")]["discordant"] == 0
    pooled = rows[("alpha+beta", "all", "down")]
    assert pooled["tier"] == "B" and pooled["n"] == 7
    assert pooled["delta"] == pytest.approx(-0.2 / 7) and pooled["worsened"] == 1
    assert pooled["delta_lower"] <= pooled["delta"] <= pooled["delta_upper"]
    assert rows[("alpha", "lookup", "up")]["tier"] == "A"
    again = compare_runs(ctl, [down, up], ["nDCG@10"], seed=0, permutations=1000, resamples=500)
    assert canonical_json(doc) == canonical_json(again)


def test_compare_runs_refuses_unpaired_query_sets(tmp_path):
    ctl, up, _ = _runs(tmp_path)
    short = make_results(tmp_path, "short", {
        "alpha": _q({"a1": ("lookup", 0.5), "a2": ("lookup", 0.2), "a3": ("summarize", 0.1)}),
        "beta": _q({"b1": (None, 0.3), "b2": (None, 0.3), "b3": (None, 0.6)})})
    with pytest.raises(ValueError, match="not paired"):
        compare_runs(ctl, [short], ["nDCG@10"], permutations=1000, resamples=500)
    with pytest.raises(ValueError, match="no per-query values for measure"):
        compare_runs(ctl, [up], ["MRR"], permutations=1000, resamples=500)


# --------------------------------------------------------------------------- Holm floors


def brute_force_holm_floors(floors):
    """Every assignment of raw p-values drawn from {each floor} + {1}, each at least its own
    floor, through holm(): the smallest adjusted p each member ever gets."""
    grid = sorted(set(floors) | {1.0})
    choices = [[g for g in grid if g >= f] for f in floors]
    best = [1.0] * len(floors)
    for ps in itertools.product(*choices):
        for j, adj in enumerate(holm(ps)):
            best[j] = min(best[j], adj)
    return best


def test_holm_floors_by_hand():
    assert holm_floors([0.25]) == [0.25]  # a family of one keeps its raw floor
    f = 2.0 ** (1 - 6)  # 6 discordant queries: 0.03125
    assert holm_floors([f] * 4) == pytest.approx([4 * f] * 4)  # shared floor: m x f = 0.125
    # a sibling with a far lower floor lets a member rank second: max(2 x 0.001, 1 x 0.03)
    assert holm_floors([0.001, 0.03]) == pytest.approx([2 * 0.001, 0.03])
    assert holm_floors([0.6, 0.9]) == [1.0, 1.0]  # capped at 1
    assert holm_floors([]) == []


@pytest.mark.parametrize("seed", range(6))
def test_holm_floors_equal_brute_force(seed):
    rng = np.random.default_rng(seed)
    # k discordant queries: floor 2^(1-k), and 1 when nothing differs (k = 0)
    floors = [1.0 if k == 0 else float(2.0 ** (1 - k))
              for k in rng.integers(0, 12, size=int(rng.integers(1, 6)))]
    assert holm_floors(floors) == pytest.approx(brute_force_holm_floors(floors), abs=1e-15)


def _family(tmp_path, improvements: dict[str, int], n: int = 12):
    """A control at 0 on n queries and one arm per entry improving its first k queries by 1."""
    ctl = make_results(tmp_path, "control", {"alpha": _q({f"q{i:02d}": ("lookup", 0.0)
                                                           for i in range(n)})})
    arms = [make_results(tmp_path, name, {"alpha": _q({f"q{i:02d}": ("lookup", 1.0 if i < k else 0.0)
                                                        for i in range(n)})})
            for name, k in improvements.items()]
    return ctl, arms


def _row(doc, arm):
    return next(r for r in doc["rows"] if r["arm"] == arm and r["query_class"] == "all")


def test_four_arms_at_six_discordant_cannot_be_significant(tmp_path):
    # each arm improves 6 queries: raw p = floor = 2^(1-6) = 0.03125 <= 0.05, but four arms
    # share the Holm multiplier: 4 x 0.03125 = 0.125 > 0.05 whatever the outcome
    ctl, arms = _family(tmp_path, {"a": 6, "b": 6, "c": 6, "d": 6})
    doc = compare_runs(ctl, arms, ["nDCG@10"], permutations=1000, resamples=500)
    for name in "abcd":
        r = _row(doc, name)
        assert r["p"] == r["p_floor"] == 2.0 ** (1 - 6)
        assert r["p_holm"] == pytest.approx(4 * 2.0 ** (1 - 6))
        assert r["p_holm_floor"] == pytest.approx(4 * 2.0 ** (1 - 6))
        assert r["verdict"] == "cannot be significant"
    alone = compare_runs(ctl, arms[:1], ["nDCG@10"], permutations=1000, resamples=500)
    assert _row(alone, "a")["verdict"] == "significant"  # 0.03125 <= 0.05 with no family
    assert alone["family_size"] == 1 and "family of one" in alone["family_note"]


def test_a_member_with_a_higher_floor_can_still_be_significant_behind_a_sibling(tmp_path):
    # "big" improves 10 queries (p = 2^-9), "six" improves 6 (p = 2^-5 = 0.03125):
    # Holm: big 2 x 2^-9, six max(2 x 2^-9, 1 x 0.03125) = 0.03125 <= 0.05.  Two times its own
    # floor (0.0625) would have called it "cannot be significant" wrongly.
    ctl, arms = _family(tmp_path, {"big": 10, "six": 6})
    doc = compare_runs(ctl, arms, ["nDCG@10"], permutations=1000, resamples=500)
    six, big = _row(doc, "six"), _row(doc, "big")
    assert big["p_holm"] == pytest.approx(2 * 2.0 ** -9) and big["verdict"] == "significant"
    assert six["p_holm"] == pytest.approx(2.0 ** -5) and six["p_holm_floor"] == pytest.approx(2.0 ** -5)
    assert six["verdict"] == "significant"


def test_verdict_never_contradicts_its_floor(tmp_path):
    ctl, arms = _family(tmp_path, {"a": 3, "b": 7, "c": 9})
    doc = compare_runs(ctl, arms, ["nDCG@10"], permutations=1000, resamples=500)
    for r in doc["rows"]:
        assert r["p_holm"] >= r["p_holm_floor"] - 1e-12
        assert verdict(r["p_holm"], r["p_holm_floor"], doc["alpha"]) == r["verdict"]


# --------------------------------------------------------------------------- provenance


@pytest.mark.parametrize("field,kwargs,expected", [
    ("relevance_policy", {"relevance_policy": {"binary": True}}, "relevance_policy differs"),
    ("metric_engine", {"metric_engine": {"name": "hand", "version": "1"}},
     "metric_engine.version differs"),
    ("sha256", {"corpus_fields": {"sha256": "f" * 64}}, "corpus alpha: sha256 differs"),
    ("version", {"corpus_fields": {"version": "v2"}}, "corpus alpha: version differs"),
    ("granularity", {"retrieval": {"source": "test", "granularity": "file"}},
     "retrieval.granularity differs"),
    ("scope", {"retrieval": {"source": "test", "scope": "gold-files"}}, "retrieval.scope differs"),
    ("stage", {"retrieval": {"source": "test", "stage": "rerank"}}, "retrieval.stage differs"),
])
def test_compare_runs_refuses_arms_that_measured_something_else(tmp_path, field, kwargs, expected):
    ctl, up, _ = _runs(tmp_path)
    other = make_results(tmp_path, f"other-{field}", {
        "alpha": _q({"a1": ("lookup", 0.6), "a2": ("lookup", 0.3), "a3": ("summarize", 0.2),
                     "a4": ("summarize", 0.4)}),
        "beta": _q({"b1": (None, 0.3), "b2": (None, 0.3), "b3": (None, 0.6)})}, **kwargs)
    with pytest.raises(ValueError, match="measured different things") as err:
        compare_runs(ctl, [up, other], ["nDCG@10"], permutations=1000, resamples=500)
    assert expected in str(err.value) and f"other-{field}" in str(err.value)


def test_provenance_differences_ignore_the_arms_own_knobs():
    base = {"metric_engine": {"name": "e", "version": "1"}, "relevance_policy": {"binary": False},
            "corpora": [{"name": "c", "version": "1", "sha256": "a", "tier": "A"}],
            "retrieval": {"mode": "bm25", "granularity": "chunk", "scope": "corpus",
                          "stage": "retrieve", "size": 10}}
    arm = {**base, "retrieval": {**base["retrieval"], "mode": "hybrid", "size": 20}}
    assert provenance_differences(base, arm) == []
    other = {**base, "retrieval": {**base["retrieval"], "stage": "rerank"}}
    assert provenance_differences(base, other) == ["retrieval.stage differs: 'retrieve' vs 'rerank'"]


def test_compare_runs_refuses_the_control_as_its_own_arm(tmp_path):
    ctl, _, _ = _runs(tmp_path)
    with pytest.raises(ValueError, match="the control run itself"):
        compare_runs(ctl, [ctl], ["nDCG@10"], permutations=1000, resamples=500)


def test_family_expectations_recompute_what_each_row_must_claim(tmp_path):
    ctl, arms = _family(tmp_path, {"a": 6, "b": 6, "c": 6, "d": 6})
    doc = compare_runs(ctl, arms, ["nDCG@10"], permutations=1000, resamples=500)
    expected = family_expectations(doc["rows"], doc["alpha"])
    for row, exp in zip(doc["rows"], expected):
        # four members at raw p = floor = 2^-5: Holm p and Holm floor 4 x 2^-5 = 0.125;
        # none rejected, so each is decided at alpha / (4 - 0)
        assert exp == {"p_holm": pytest.approx(0.125), "p_holm_floor": pytest.approx(0.125),
                       "family_size": 4, "verdict": "cannot be significant", "holm_divisor": 4}
        assert (row["p_holm"], row["p_holm_floor"], row["family_size"], row["verdict"]) == \
            pytest.approx((exp["p_holm"], exp["p_holm_floor"], 4, exp["verdict"]))
    # a row that claims the old raw-floor verdict is caught
    forged = [dict(r, verdict="not significant") for r in doc["rows"]]
    assert all(e["verdict"] != f["verdict"]
               for e, f in zip(family_expectations(forged, doc["alpha"]), forged))
    # a family assembled one arm at a time: each row alone is a family of one
    single = [dict(doc["rows"][0])]
    assert family_expectations(single, 0.05)[0] == {
        "p_holm": 2.0 ** -5, "p_holm_floor": 2.0 ** -5, "family_size": 1, "verdict": "significant",
        "holm_divisor": 1}


# --------------------------------------------------------------------------- stored decimals
#
# Per-query values reach the test through per_query.jsonl, rounded to 10 decimals
# (harness.core.canonical).  Rational measures (MRR 1/r, recall j/R, AP) tie exactly; the
# rounding must not break those ties.  The reference is exact rational enumeration with
# fractions.Fraction of the *unrounded* values.


def fraction_p(diffs) -> Fraction:
    """Exact sign-flip p of rational differences: all 2^k signed sums of the nonzero ones."""
    d = [Fraction(x) for x in diffs if x != 0]
    sums = [Fraction(0)]
    for x in d:  # every signed sum, built by doubling
        sums = [s + x for s in sums] + [s - x for s in sums]
    observed = abs(sum(d))
    return Fraction(sum(1 for s in sums if abs(s) >= observed), len(sums))


def stored(value: Fraction) -> float:
    """What per_query.jsonl holds for ``value``: the canonical 10-decimal text, read back."""
    return float(canonical_json(float(value)))


def _reciprocal(rank):
    return Fraction(0) if rank is None else Fraction(1, rank)


#: 8 queries, MRR@10 (None: nothing relevant in the top 10); queries 2 and 6 tie, so 6 are
#: discordant: -1/6, 1/12, -1/3, 1/12, 1/12, -7/18 (sum -23/36)
EIGHT_CONTROL = [6, 8, 4, 3, 6, None, 4, 2]
EIGHT_ARM = [None, 8, 3, None, 4, None, 3, 9]


def test_eight_query_mrr_example_is_exact_on_stored_decimals():
    ctl = [_reciprocal(r) for r in EIGHT_CONTROL]
    arm = [_reciprocal(r) for r in EIGHT_ARM]
    exact = fraction_p([a - c for a, c in zip(arm, ctl)])
    assert exact == Fraction(24, 64)  # 0.375
    test = paired_randomization_test([stored(v) for v in ctl], [stored(v) for v in arm])
    assert test.discordant == 6 and test.method == "exact"
    assert test.p == 0.375  # was 0.28125: rounding broke ties such as 1/3 = 4 x 1/12


class _AllSignPatterns:
    """A stand-in generator whose one block of 256 bytes is every byte once: with n <= 8
    queries, every sign pattern then appears 2^(8-n) times, so the Monte Carlo count b is
    256 x the exact share and ``(b + 1) / 257`` is known from rational enumeration."""

    def integers(self, low, high, size, dtype):
        assert (low, high, size[1]) == (0, 256, 1) and size[0] == 256
        return np.arange(256, dtype=dtype).reshape(256, 1)


def _mrr(rng):
    return _reciprocal(None if rng.random() < 0.2 else int(rng.integers(1, 11)))


def _recall(rng, relevant):
    return Fraction(int(rng.integers(0, relevant + 1)), relevant)


def _ap(rng, relevant):
    """Average precision of a random top-10 list over ``relevant`` relevant documents."""
    hits, total = 0, Fraction(0)
    for rank in range(1, 11):
        if hits < relevant and rng.random() < 0.3:
            hits += 1
            total += Fraction(hits, rank)
    return total / relevant


def _paired_values(rng, kind, n):
    relevant = [int(rng.integers(1, 7)) for _ in range(n)]

    def draw(i):
        if kind == "mrr":
            return _mrr(rng)
        return _recall(rng, relevant[i]) if kind == "recall" else _ap(rng, relevant[i])

    ctl = [draw(i) for i in range(n)]
    arm = [c if rng.random() < 0.25 else draw(i) for i, c in enumerate(ctl)]  # some ties
    return ctl, arm


@pytest.mark.parametrize("kind", ["mrr", "recall", "ap"])
def test_p_on_stored_decimals_equals_rational_enumeration(kind):
    rng = np.random.default_rng({"mrr": 41, "recall": 42, "ap": 43}[kind])
    compared = mismatched = mc_compared = mc_mismatched = 0
    for _ in range(1000):
        n = int(rng.integers(4, 11))
        ctl, arm = _paired_values(rng, kind, n)
        exact = fraction_p([a - c for a, c in zip(arm, ctl)])
        s_ctl, s_arm = np.array([stored(v) for v in ctl]), np.array([stored(v) for v in arm])
        compared += 1
        mismatched += paired_randomization_test(s_ctl, s_arm).p != exact
        if n <= 8:  # the Monte Carlo path, fed every sign pattern, counts the same ties
            (mc,) = monte_carlo_p((s_arm - s_ctl)[:, None], 256, _AllSignPatterns())
            mc_compared += 1
            mc_mismatched += mc != float((256 * exact + 1) / 257)
    assert (compared, mismatched, mc_mismatched) == (1000, 0, 0) and mc_compared > 400


def test_the_intervals_command_reads_per_query_jsonl_and_gets_the_exact_p(tmp_path, capsys):
    def run_dir(name, ranks):
        return make_results(tmp_path, name, {"alpha": {
            f"q{i}": ("lookup", {"MRR@10": float(_reciprocal(r))}) for i, r in enumerate(ranks)}})

    ctl, arm = run_dir("control", EIGHT_CONTROL), run_dir("arm", EIGHT_ARM)
    assert "0.3333333333" in (ctl / "per_query.jsonl").read_text()  # stored to 10 decimals
    assert main(["intervals", str(arm), "--control", str(ctl), "--resamples", "200"]) == 0
    capsys.readouterr()
    doc = json.loads((arm / "comparisons.json").read_text())
    assert {r["query_class"] for r in doc["rows"]} == {"all", "lookup"}
    for row in doc["rows"]:  # both slices hold the same 8 queries
        assert (row["discordant"], row["method"], row["p"]) == (6, "exact", 0.375)


def test_differences_are_counted_in_units_of_the_stored_precision():
    from harness.core.canonical import FLOAT_DECIMALS
    from harness.stats.randomization import DECIMALS, quantize

    assert DECIMALS == FLOAT_DECIMALS
    # 1/3 - 1/12 stored: 0.3333333333 - 0.0833333333 = 2500000000 units exactly
    assert quantize([stored(Fraction(1, 3)) - stored(Fraction(1, 12))]).tolist() == [2.5e9]
    assert quantize([4e-11, -4e-11]).tolist() == [0.0, 0.0]  # below half a unit: a tie
    # 2^53 units is where float64 sums stop being exact integers: refused, not approximated
    with pytest.raises(ValueError, match="2\\^53"):
        exact_p([2.0 ** 53 / 1e10, 1.0])
    with pytest.raises(ValueError, match="finite"):
        quantize([float("nan")])
