"""Corpus agreement: coefficients, edge cases, the reference's 21-arm table, manifests."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from harness.cli import main
from harness.evaluation.manifests import arms_from_manifest, emit_manifest, load_manifest
from harness.stats.agreement import Arm, agreement, kendall_tau_b, pearson, sign_class, spearman
from tests.harness.stats.builders import make_results

# The reference's per-arm table: nDCG@10, all class, delta against each family's control,
# (family, arm, axis, delta qmsum, delta synthetic), as printed (4 decimals).
REFERENCE = [
    ("fusion", "rrf-30-explicit", "flag-inertness control", 0.0, 0.0),
    ("fusion", "rrf-60", "rank_constant", -0.0003, 0.0063),
    ("fusion", "norm-minmax-arith", "normalization", 0.0008, -0.0555),
    ("fusion", "norm-l2-arith", "normalization", 0.0010, -0.0633),
    ("fusion", "norm-zscore-arith", "normalization", 0.0015, -0.0687),
    ("fusion", "norm-minmax-geom", "combination", -0.0152, -0.1984),
    ("fusion", "norm-minmax-harm", "combination", -0.0161, -0.2059),
    ("fusion", "norm-minmax-arith-w70-30", "weighting", 0.0014, -0.1450),
    ("fusion", "norm-minmax-arith-w30-70", "weighting", -0.0093, -0.0082),
    ("budget", "budget-48-12-4-repeat", "repeatability control", 0.0, 0.0),
    ("budget", "budget-48-20-4", "final_chunks", 0.0, 0.0),
    ("budget", "budget-48-08-4", "final_chunks", -0.0013, -0.0028),
    ("budget", "budget-48-12-2", "max_chunks_per_file", 0.0, 0.0),
    ("budget", "budget-48-12-8", "max_chunks_per_file", 0.0, 0.0),
    ("budget", "budget-24-12-4", "candidate_pool", 0.0009, 0.0095),
    ("budget", "budget-96-12-4", "candidate_pool", 0.0004, 0.0091),
    ("budget", "budget-96-12-4-pairs96", "rerank_max_pairs", 0.0007, 0.0057),
    ("pool", "pool-12", "candidate_pool", 0.0128, 0.0342),
    ("pool", "pool-24", "candidate_pool", 0.0036, 0.0095),
    ("pool", "pool-32", "candidate_pool", 0.0013, 0.0170),
    ("pool", "pool-96", "candidate_pool", -0.0009, 0.0091),
]
CORPORA = ["qmsum", "synthetic"]


def reference_arms():
    return [Arm(f, n, a, (x, y), "given") for f, n, a, x, y in REFERENCE]


# --------------------------------------------------------------------------- coefficients


def test_tau_b_is_plus_and_minus_one_on_the_extremes():
    x = [0.1, 0.2, 0.3, 0.4, 0.5]
    assert kendall_tau_b(x, [1, 2, 3, 4, 5]).value == 1.0
    assert kendall_tau_b(x, [5, 4, 3, 2, 1]).value == -1.0
    assert spearman(x, [1, 2, 3, 4, 5]).value == pytest.approx(1.0)
    assert spearman(x, [5, 4, 3, 2, 1]).value == pytest.approx(-1.0)
    # n = 5, no ties, perfect order: exact p = 2 / 5! (the identity and its reverse)
    assert kendall_tau_b(x, [1, 2, 3, 4, 5]).p == pytest.approx(2 / 120)


def test_a_constant_corpus_is_undefined_never_zero():
    x = [0.1, -0.2, 0.3, 0.05]
    flat = [0.0, 0.0, 0.0, 0.0]
    for coefficient in (kendall_tau_b, spearman, pearson):
        c = coefficient(x, flat)
        assert c.value is None and c.p is None
    doc = agreement([Arm("f", f"a{i}", None, (v, 0.0)) for i, v in enumerate(x)], CORPORA)
    fam = doc["families"][0]
    assert fam["kendall_tau_b"]["value"] is None and fam["pearson"]["outlier_driven"] is None
    assert fam["signs"]["one_sided"] == 4 and fam["delta_range"]["synthetic"] == 0.0


def test_rank_coefficients_are_invariant_to_monotone_transforms():
    rng = np.random.default_rng(8)
    x = np.round(rng.normal(0, 0.01, 15), 4)
    y = np.round(rng.normal(0, 0.05, 15), 4)
    y[:3] = 0.0  # ties
    control_x, control_y = 0.0983, 0.2952
    for fx, fy in [(lambda v: v / control_x, lambda v: v / control_y),  # delta -> delta %
                   (lambda v: np.exp(50 * v), lambda v: v ** 3),
                   (lambda v: np.arctan(1000 * v), lambda v: 7 * v + 2)]:
        for coefficient in (kendall_tau_b, spearman):
            a, b = coefficient(x, y), coefficient(fx(x), fy(y))
            assert b.value == pytest.approx(a.value, abs=1e-12)
            assert b.p == pytest.approx(a.p, abs=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_coefficients_match_scipy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    x = rng.integers(-3, 4, size=n) / 100  # coarse: many ties
    y = x * rng.uniform(-1, 2) + rng.integers(-3, 4, size=n) / 100
    ref = stats.kendalltau(x, y, variant="b")
    ours = kendall_tau_b(x, y)
    assert ours.value == pytest.approx(ref.statistic, abs=1e-12)
    assert ours.p == pytest.approx(ref.pvalue, rel=1e-9)
    assert spearman(x, y).value == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)
    assert spearman(x, y).p == pytest.approx(stats.spearmanr(x, y).pvalue, rel=1e-9)
    assert pearson(x, y).value == pytest.approx(stats.pearsonr(x, y).statistic, abs=1e-12)
    assert pearson(x, y).p == pytest.approx(stats.pearsonr(x, y).pvalue, rel=1e-6)


def test_exact_kendall_p_matches_scipy_without_ties():
    rng = np.random.default_rng(1)
    for n in (4, 7, 12, 20):
        x, y = rng.permutation(n).astype(float), rng.permutation(n).astype(float)
        ref = stats.kendalltau(x, y, method="exact")
        assert kendall_tau_b(x, y).p == pytest.approx(ref.pvalue, rel=1e-12)


def test_sign_classes():
    assert sign_class(0.01, 0.02) == "agree"
    assert sign_class(-0.01, -0.02) == "agree"
    assert sign_class(0.01, -0.02) == "disagree"
    assert sign_class(0.0, 0.0) == "inert"
    assert sign_class(0.0, 0.3) == "one-sided"
    assert sign_class(0.0004, -0.0003, tolerance=0.0005) == "inert"


# --------------------------------------------------------------------------- the reference table


def test_reference_table_reproduces_the_published_coefficients():
    doc = agreement(reference_arms(), CORPORA)
    pooled = doc["pooled"]
    # published: pooled tau-b +0.301 (p 0.066), Spearman +0.378 (p 0.091); from the table's
    # 4-decimal deltas tau-b reads +0.302: rounding moves one pair's tie status, so within 0.002
    assert pooled["kendall_tau_b"]["value"] == pytest.approx(0.301, abs=0.002)
    assert pooled["kendall_tau_b"]["p"] == pytest.approx(0.066, abs=0.001)
    assert round(pooled["spearman"]["value"], 3) == 0.378
    assert round(pooled["spearman"]["p"], 3) == 0.091
    assert pooled["n"] == 21
    assert pooled["signs"] == {"agree": 10, "disagree": 6, "inert": 5, "one_sided": 0,
                               "agree_share": 10 / 16}
    # Pearson pooled +0.697 (p 0.0004) published; flagged as outlier-driven
    assert pooled["pearson"]["value"] == pytest.approx(0.697, abs=0.002)
    assert pooled["pearson"]["outlier_driven"] is True
    fams = {f["family"]: f for f in doc["families"]}
    published = {"fusion": (9, 0.000, 1.000, 0.133, 0.732), "budget": (8, 0.909, 0.004, 0.973, 0.00005),
                 "pool": (4, 0.667, 0.333, 0.800, 0.200)}
    for fam, (n, tau, tau_p, rho, rho_p) in published.items():
        f = fams[fam]
        assert f["n"] == n
        assert round(f["kendall_tau_b"]["value"], 3) == tau
        assert f["kendall_tau_b"]["p"] == pytest.approx(tau_p, abs=0.0006)
        assert round(f["spearman"]["value"], 3) == rho
        assert f["spearman"]["p"] == pytest.approx(rho_p, abs=0.0006)
    # winners and delta ranges: fusion 0.0176 vs 0.2122 (12.1x), budget 5.6x, pool 1.8x
    assert fams["fusion"]["winners"]["qmsum"]["arm"] == "norm-zscore-arith"
    assert fams["fusion"]["winners"]["synthetic"]["arm"] == "rrf-60"
    assert not fams["fusion"]["winners"]["same"] and fams["pool"]["winners"]["same"]
    assert fams["budget"]["winners"]["qmsum"]["arm"] == fams["budget"]["winners"]["synthetic"]["arm"] \
        == "budget-24-12-4"
    assert fams["fusion"]["delta_range"]["qmsum"] == pytest.approx(0.0015 + 0.0161)
    assert fams["fusion"]["delta_range"]["synthetic"] == pytest.approx(0.0063 + 0.2059)
    for fam, ratio in (("fusion", 12.1), ("budget", 5.6), ("pool", 1.8)):
        assert round(fams[fam]["delta_range"]["ratio"], 1) == ratio
    axes = {a["axis"]: a for a in doc["axes"]}
    assert (axes["normalization"]["agree"], axes["normalization"]["disagree"]) == (0, 3)
    assert (axes["candidate_pool"]["agree"], axes["candidate_pool"]["disagree"]) == (5, 1)


def test_reference_table_sensitivity_drops_and_inert_exclusion():
    arms = reference_arms()
    dropped = agreement(arms, CORPORA, drop=["norm-minmax-geom", "norm-minmax-harm"])
    fusion = next(f for f in dropped["families"] if f["family"] == "fusion")
    # published: fusion without geom/harm tau-b -0.714 (p 0.030), Spearman -0.857 (p 0.014)
    assert round(fusion["kendall_tau_b"]["value"], 3) == -0.714
    assert fusion["kendall_tau_b"]["p"] == pytest.approx(0.030, abs=0.0006)
    assert round(fusion["spearman"]["value"], 3) == -0.857
    assert round(dropped["pooled"]["kendall_tau_b"]["value"], 3) == 0.131  # published +0.131
    assert dropped["pooled"]["pearson"]["value"] == pytest.approx(0.115, abs=0.003)  # published +0.115
    inert = agreement(arms, CORPORA, exclude_inert=True)
    budget = next(f for f in inert["families"] if f["family"] == "budget")
    # published: --exclude-inert takes budget from +0.909 to +0.667 at p = 0.333 (n = 4)
    assert budget["n"] == 4 and round(budget["kendall_tau_b"]["value"], 3) == 0.667
    assert round(budget["kendall_tau_b"]["p"], 3) == 0.333
    assert inert["excluded_inert"] == sorted(n for _, n, _, x, y in REFERENCE if x == y == 0.0)
    with pytest.raises(ValueError, match="unknown arms"):
        agreement(arms, CORPORA, drop=["no-such-arm"])


def test_reference_table_through_a_manifest_and_the_cli(tmp_path, capsys):
    families = {}
    for fam, name, axis, x, y in REFERENCE:
        families.setdefault(fam, []).append(
            {"name": name, "axis": axis, "deltas": {"all": {"qmsum": x, "synthetic": y}}})
    manifest = {"kind": "agreement-manifest", "measure": "nDCG@10", "corpora": CORPORA,
                "families": [{"name": f, "arms": a} for f, a in families.items()]}
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(manifest))
    out = tmp_path / "agreement.json"
    assert main(["agreement", "--manifest", str(path), "--json", "--out", str(out)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == json.loads(out.read_text())
    assert printed["kind"] == "agreement" and printed["tier"] == "B"  # typed-in deltas fail closed
    assert printed["pooled"]["signs"]["agree"] == 10
    assert main(["agreement", "--manifest", str(path)]) == 0
    text = capsys.readouterr().out
    assert "| pooled | 21 | +0.302 |" in text and "(outlier-driven)" in text
    assert main(["agreement", "--manifest", str(path), "--class", "lookup"]) == 2
    assert "deltas.lookup" in capsys.readouterr().err


# --------------------------------------------------------------------------- manifests over runs


def _two_corpora(ndcg_a, ndcg_b, n=(2, 2)):
    return {"qm": {f"q{i}": ("lookup", {"nDCG@10": ndcg_a}) for i in range(n[0])},
            "syn": {f"s{i}": ("lookup", {"nDCG@10": ndcg_b}) for i in range(n[1])}}


def test_manifest_over_results_dirs_reduces_arms_to_deltas(tmp_path):
    tiers = {"qm": "A", "syn": "B"}
    for name, (a, b) in {"ctl": (0.10, 0.30), "arm1": (0.12, 0.25), "arm2": (0.09, 0.31)}.items():
        make_results(tmp_path, name, _two_corpora(a, b), tiers)
    manifest = {"families": [{"name": "fam", "control": "ctl",
                              "arms": [{"name": "arm1", "run": "arm1", "axis": "k"},
                                       {"name": "arm2", "run": "arm2/metrics.json", "axis": "k"}]}]}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(manifest))
    arms, corpora, measure = arms_from_manifest(load_manifest(path), tmp_path)
    assert corpora == ["qm", "syn"] and measure == "nDCG@10"  # inferred: every run has the same two
    by = {a.name: a for a in arms}
    assert by["arm1"].deltas == pytest.approx((0.12 - 0.10, 0.25 - 0.30))
    assert by["arm2"].deltas == pytest.approx((0.09 - 0.10, 0.31 - 0.30))
    assert by["arm1"].tier == "B" and by["arm1"].source == "measured" and by["arm1"].run_id
    doc = agreement(arms, corpora)
    assert doc["pooled"]["signs"]["disagree"] == 2 and doc["pooled"]["kendall_tau_b"]["value"] == -1.0
    other = make_results(tmp_path / "other", "arm3", _two_corpora(0.2, 0.2, n=(3, 2)), tiers)
    manifest["families"][0]["arms"].append({"name": "arm3", "run": str(other), "axis": "k"})
    path.write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match="same query set"):
        arms_from_manifest(load_manifest(path), tmp_path)


def test_manifest_validation_names_the_field(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"families": [{"name": "f", "arms": [{"name": "a"}]}]}))
    with pytest.raises(ValueError, match=r"families\[0\].arms\[0\].*exactly one of 'run'"):
        load_manifest(path)
    path.write_text(json.dumps({"families": [], "extra": 1}))
    with pytest.raises(ValueError, match="unknown fields"):
        load_manifest(path)


def test_emit_manifest_groups_runs_and_finds_the_default_control(tmp_path, capsys):
    tiers = {"qm": "A", "syn": "A"}

    def retrieval(explicit, k):
        return {"stage": "retrieve", "scope": "corpus",
                "fusion": {"selected_explicitly": explicit, "rank_constant": k}}

    runs = [make_results(tmp_path, "rrf-60", _two_corpora(0.1, 0.3), tiers, retrieval(True, 60)),
            make_results(tmp_path, "rrf-30-default", _two_corpora(0.1, 0.3), tiers, retrieval(False, 30)),
            make_results(tmp_path, "rrf-90", _two_corpora(0.1, 0.3), tiers, retrieval(True, 90))]
    doc = emit_manifest(runs)
    assert doc["corpora"] == ["qm", "syn"] and len(doc["families"]) == 1
    fam = doc["families"][0]
    assert fam["name"] == "retrieve-corpus" and fam["control"].endswith("rrf-30-default")
    assert "note" not in fam
    assert [a["name"] for a in fam["arms"]] == ["rrf-60", "rrf-90"]
    assert fam["arms"][0]["axis"] == "fusion.rank_constant,fusion.selected_explicitly"
    assert main(["agreement", "--emit-manifest", "--runs", *map(str, runs)]) == 0
    emitted = tmp_path / "emitted.json"
    emitted.write_text(capsys.readouterr().out)
    assert main(["agreement", "--manifest", str(emitted), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pooled"]["signs"]["inert"] == 2
