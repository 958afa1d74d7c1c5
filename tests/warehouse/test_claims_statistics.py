"""Migration 002: intervals, comparisons and agreement in the warehouse, with their tiers.

The runs are the mixed fixture of ``conftest.py`` (corpus ``pub`` tier A, ``secretcorpus``
tier B, pooled ``pub+secretcorpus`` tier B).  The statistics are computed by the harness's
own functions on those runs; expected numbers are worked out by hand from the fixture's
per-query values.
"""

from __future__ import annotations

import json
import math

import pytest

from harness.claims.metrics import run_id
from harness.evaluation.results import load_metrics, load_per_query
from harness.stats.agreement import Arm, agreement
from harness.claims import write_claim as write_document
from harness.core.canonical import canonical_json
from harness.claims.comparisons import ComparisonsClaim
from harness.claims.intervals import IntervalsClaim
from harness.stats.intervals import row_intervals
from harness.evaluation.runs import compare_runs
from tests.warehouse.builders import build_results, simple_run
from tests.warehouse.conftest import (CANDIDATE, CLASSES, CONTROL, CORPORA, PUB_ONLY,
                                     pub_values)
from warehouse import connect, ingest_document, ingest_results, queries
from warehouse.errors import IngestRefused


COMPARISONS_JSON, INTERVALS_JSON = ComparisonsClaim.RESULTS_FILE, IntervalsClaim.RESULTS_FILE

RESAMPLES = 500


def _intervals(out):
    return row_intervals(load_metrics(out), load_per_query(out), seed=0, resamples=RESAMPLES)


def _count(db, sql, params=None):
    with connect(db, read_only=True) as conn:
        return conn.query_one(sql, params)[0]


@pytest.fixture(scope="module")
def stats_db(tmp_path_factory):
    """Control and candidate over pub (A) + secretcorpus (B), and pub-control and
    pub-candidate over pub alone, with intervals.json in each and each candidate's
    comparisons.json against its control."""
    root = tmp_path_factory.mktemp("stats")
    db = root / "w.duckdb"
    dirs = {}
    for prefix, corpora, pick in (("", CORPORA, dict), ("pub-", PUB_ONLY, pub_values)):
        control = build_results(root / f"{prefix}control", pick(CONTROL), corpora=corpora,
                                classes=CLASSES, control_name=f"{prefix}control")
        candidate = build_results(root / f"{prefix}candidate", pick(CANDIDATE), corpora=corpora,
                                  classes=CLASSES, control_name=f"{prefix}candidate")
        for out in (control, candidate):
            write_document(out / INTERVALS_JSON, _intervals(out))
        write_document(candidate / COMPARISONS_JSON,
                       compare_runs(control, [candidate], seed=0, permutations=200,
                                    resamples=RESAMPLES, progress=False))
        dirs[f"{prefix}control"], dirs[f"{prefix}candidate"] = control, candidate
    ids = {name: ingest_results(out, db).run_id for name, out in dirs.items()}
    return db, ids, dirs


def test_intervals_are_stored_with_the_run_and_join_their_metric_rows(stats_db):
    db, ids, dirs = stats_db
    doc = json.loads((dirs["control"] / INTERVALS_JSON).read_text())
    # 4 metric rows per run (pub lookup/summarize/all, secretcorpus lookup/all, pooled) x 2
    # measures: pub has 2 classes + all, secretcorpus 1 class + all, plus the pooled row = 6
    assert len(doc["rows"]) == 6 * 2
    assert _count(db, "SELECT count(*) FROM intervals WHERE run_id = ?", [ids["control"]]) == 12
    table = queries.metric_intervals("internal", runs=[ids["control"]], db_path=db)
    assert len(table) == 12 and table["lower"].notna().all()
    assert (table["lower"] <= table["value"] + 1e-9).all()
    assert (table["value"] <= table["upper"] + 1e-9).all()
    # pub / lookup has one query (p1): every resample is that query, the interval is a point
    row = table[(table.corpus == "pub") & (table.query_class == "lookup")
                & (table.measure == "nDCG@10")].iloc[0]
    assert (row.value, row.lower, row.upper) == (0.5, 0.5, 0.5)


def test_publishable_intervals_hold_tier_a_rows_only(stats_db):
    db, ids, _ = stats_db
    pub = queries.metric_intervals("publishable", db_path=db)
    internal = queries.metric_intervals("internal", db_path=db)
    assert set(pub["tier"]) == {"A"} and set(pub["corpus"]) == {"pub"}
    # the tier-B corpus and the pooled row (tier B: it contains secretcorpus) are internal
    assert {"secretcorpus", "pub+secretcorpus"} <= set(internal["corpus"])
    # only the pub-only runs: the mixed runs' pub rows shared an index with secretcorpus
    assert set(pub["run_id"]) == {ids["pub-control"], ids["pub-candidate"]}
    assert len(pub) == 2 * 3 * 2  # two runs x pub's three rows x two measures
    assert pub["lower"].notna().all()
    assert _count(db, "SELECT count(*) FROM intervals_publishable WHERE list_contains(?, run_id)",
                  [[ids["control"], ids["candidate"]]]) == 0


def test_the_same_intervals_document_ingested_standalone_is_stored_once(stats_db, tmp_path):
    db, ids, dirs = stats_db
    before = _count(db, "SELECT count(*) FROM intervals")
    report = ingest_document(dirs["control"] / INTERVALS_JSON, db)
    assert report.inserted and report.kind == "intervals"
    assert _count(db, "SELECT count(*) FROM intervals") == before
    # the documents row takes its run's tier (the run holds a B corpus: B)
    assert _count(db, "SELECT tier FROM documents WHERE document_id = ?", [report.run_id]) == "B"


def test_comparisons_carry_holm_marks_and_hand_checked_deltas(stats_db):
    db, ids, _ = stats_db
    rows = queries.deltas_tested(ids["control"], [ids["candidate"]], "internal",
                                 measures=["nDCG@10"], db_path=db)
    pub_all = rows[(rows.corpus == "pub") & (rows.query_class == "all")].iloc[0]
    # pub: p1 0.5 -> 0.6, p2 0.3 -> 0.5: delta = (0.1 + 0.2) / 2
    assert pub_all.delta == pytest.approx((0.1 + 0.2) / 2)
    # two discordant queries: the floor is 2^(1-2) = 0.5 > 0.05
    assert pub_all.discordant == 2 and pub_all.p_floor == pytest.approx(2 ** (1 - 2))
    assert pub_all.verdict == "cannot be significant"
    # one arm: Holm over a family of one changes nothing
    assert pub_all.p_holm == pytest.approx(pub_all.p)
    stored = queries.comparisons("internal", control_run="control", db_path=db)
    assert set(stored["arm_name"]) == {"candidate"} and len(stored) == 6 * 2


def test_publishable_comparisons_hold_no_tier_b_row(stats_db):
    db, ids, _ = stats_db
    pub = queries.comparisons("publishable", db_path=db)
    internal = queries.comparisons("internal", db_path=db)
    assert set(pub["tier"]) == {"A"} and set(pub["corpus"]) == {"pub"}
    assert set(pub["control_run_id"]) == {ids["pub-control"]}
    assert "B" in set(internal["tier"]) and "pub+secretcorpus" in set(internal["corpus"])
    tested = queries.deltas_tested("pub-control", None, "publishable", db_path=db)
    assert set(tested["tier"]) == {"A"} and tested["verdict"].notna().all()
    assert set(tested["run_id"]) == {ids["pub-candidate"]} and tested["comparable"].all()
    # the mixed pair's pub rows are internal only (their index held secretcorpus)
    assert queries.deltas_tested("control", None, "publishable", db_path=db).empty


def test_intervals_of_another_run_are_refused_and_nothing_is_written(tmp_path):
    db = tmp_path / "w.duckdb"
    one = simple_run(tmp_path / "one", control_name="one")
    two = simple_run(tmp_path / "two", control_name="two", offset=0.05)
    write_document(two / INTERVALS_JSON, _intervals(one))
    with pytest.raises(IngestRefused, match=r"intervals.json: field 'run_id'.*another metrics"):
        ingest_results(two, db)
    assert not db.exists() or _count(db, "SELECT count(*) FROM runs") == 0


@pytest.mark.parametrize("edit, field", [
    (lambda r: r.update(lower=r["estimate"] - 0.2, upper=r["estimate"] - 0.1), "estimate"),
    (lambda r: r.update(estimate=r["estimate"] - 0.01, lower=r["lower"] - 0.02), "estimate"),
    (lambda r: r.update(tier="C"), "tier"),
    (lambda r: r.update(n=r["n"] + 1), "n"),
])
def test_an_interval_row_that_contradicts_its_run_is_refused(tmp_path, edit, field):
    db = tmp_path / "w.duckdb"
    out = simple_run(tmp_path / "r")
    doc = _intervals(out)
    edit(doc["rows"][0])
    (out / INTERVALS_JSON).write_text(canonical_json(doc))  # a hand edit: no writer checks it
    with pytest.raises(IngestRefused, match=rf"rows\[0\]\.{field}"):
        ingest_results(out, db)
    assert not db.exists() or _count(db, "SELECT count(*) FROM intervals") == 0


def test_a_verdict_that_contradicts_its_holm_p_is_refused(tmp_path):
    control = simple_run(tmp_path / "c", n_queries=8, control_name="c")
    arm = simple_run(tmp_path / "a", n_queries=8, control_name="a", offset=0.1)
    doc = compare_runs(control, [arm], seed=0, permutations=200, resamples=RESAMPLES,
                       progress=False)
    at = next(i for i, r in enumerate(doc["rows"]) if r["measure"] == "nDCG@10")
    row = doc["rows"][at]
    # eight queries all improved by 0.1: exact p = 2 / 2^8 = 1/128 <= 0.05, significant
    assert row["verdict"] == "significant" and row["p"] == pytest.approx(2 / 2 ** 8)
    row["verdict"] = "not significant"
    with pytest.raises(IngestRefused, match=rf"rows\[{at}\]\.verdict.*contradicts"):
        ingest_document(doc, tmp_path / "w.duckdb")


def test_a_comparison_against_a_control_not_in_the_warehouse_fails_closed(tmp_path):
    db = tmp_path / "w.duckdb"
    control = simple_run(tmp_path / "c", n_queries=4, control_name="c")
    arm = simple_run(tmp_path / "a", n_queries=4, control_name="a", offset=0.1)
    ingest_results(arm, db)  # the control itself is never ingested
    ingest_document(compare_runs(control, [arm], seed=0, permutations=100,
                                 resamples=RESAMPLES, progress=False), db)
    assert len(queries.comparisons("internal", db_path=db)) > 0
    assert queries.comparisons("publishable", db_path=db).empty


# --------------------------------------------------------------------------- agreement


TWO_A = {"x": ("A", "MIT"), "y": ("A", "CC0-1.0")}
Y_IS_B = {"x": ("A", "MIT"), "y": ("B", "CC-BY-NC-4.0")}


@pytest.fixture(scope="module")
def agreement_db(tmp_path_factory):
    """Three runs over x and y (both tier A) and one whose y is recorded as tier B."""
    root = tmp_path_factory.mktemp("agreement")
    db = root / "w.duckdb"
    ids = {}
    for name, corpora, shift in (("a1", TWO_A, 0.1), ("a2", TWO_A, 0.2), ("a3", TWO_A, 0.3),
                                 ("b1", Y_IS_B, 0.4)):
        values = {(c, f"{c}{i}"): {"nDCG@10": min(1.0, i / 10 + shift)}
                  for c in ("x", "y") for i in range(1, 4)}
        out = build_results(root / name, values, corpora=corpora, control_name=name)
        ids[name] = ingest_results(out, db).run_id
    return db, ids


def _agreement_doc(ids, *, missing_run=None):
    """Family f1: a1, a2, a3 with hand-picked deltas; family f2: b1 (tier B)."""
    arms = [Arm("f1", "a1", "k", (0.1, 0.01), "measured", ids["a1"], "A"),
            Arm("f1", "a2", "k", (0.2, 0.03), "measured", ids["a2"], "A"),
            Arm("f1", "a3", "k", (0.3, 0.02), "measured", missing_run or ids["a3"], "A"),
            Arm("f2", "b1", "k", (0.05, 0.0), "measured", ids["b1"], "B")]
    return agreement(arms, ["x", "y"])


def test_agreement_is_stored_per_family_and_pooled_with_hand_computed_coefficients(agreement_db):
    db, ids = agreement_db
    report = ingest_document(_agreement_doc(ids), db)
    rows = queries.agreement_results("internal", document_id=report.run_id, db_path=db)
    f1 = rows[rows.family == "f1"].iloc[0]
    # deltas on x (0.1, 0.2, 0.3) vs y (0.01, 0.03, 0.02): pairs (1,2) and (1,3) concordant,
    # (2,3) discordant: tau-b = (2 - 1) / 3; ranks (1,2,3) vs (1,3,2): rho = 1 - 6*2/(3*(9-1))
    assert f1.tau_b == pytest.approx((2 - 1) / 3)
    assert f1.spearman == pytest.approx(1 - 6 * 2 / (3 * (9 - 1)))
    assert (f1.agree, f1.disagree, f1.inert, f1.one_sided) == (3, 0, 0, 0)
    assert f1.winner_a == "a3" and f1.winner_b == "a2"
    # range on y / range on x = (0.03 - 0.01) / (0.3 - 0.1)
    assert f1.range_ratio == pytest.approx(0.02 / 0.2)
    f2 = rows[rows.family == "f2"].iloc[0]
    # one arm: every coefficient is undefined, stored as NULL, never 0
    assert math.isnan(f2.tau_b) and math.isnan(f2.spearman) and f2.one_sided == 1
    pooled = rows[rows.pooled].iloc[0]
    assert pooled.n == 4 and pooled.tier == "B" and pooled.corpus == "x+y"
    arms = queries.agreement_arms("internal", document_id=report.run_id, db_path=db)
    assert sorted(arms.arm) == ["a1", "a2", "a3", "b1"]


def test_publishable_agreement_never_shows_a_tier_b_arm_or_pooled_row(agreement_db):
    db, ids = agreement_db
    doc_id = ingest_document(_agreement_doc(ids), db).run_id
    pub = queries.agreement_results("publishable", document_id=doc_id, db_path=db)
    assert list(pub.family) == ["f1"] and set(pub.tier) == {"A"}
    arms = queries.agreement_arms("publishable", document_id=doc_id, db_path=db)
    assert sorted(arms.arm) == ["a1", "a2", "a3"]
    docs = queries.agreement_documents("publishable", db_path=db).set_index("document_id")
    # listed for its publishable family only; the pooled row (tier B) stays internal
    assert docs.loc[doc_id, ["tier", "has_pooled", "families", "arms"]].tolist() == \
        ["A", False, 1, 3]
    internal = queries.agreement_documents("internal", db_path=db).set_index("document_id")
    assert internal.loc[doc_id, ["tier", "has_pooled", "families", "arms"]].tolist() == \
        ["B", True, 2, 4]


def test_an_arm_whose_run_is_not_in_the_warehouse_keeps_its_family_out(agreement_db):
    db, ids = agreement_db
    doc = _agreement_doc(ids, missing_run="f" * 64)
    doc_id = ingest_document(doc, db).run_id
    pub = queries.agreement_results("publishable", document_id=doc_id, db_path=db)
    assert pub.empty  # f1's a3 cannot be traced to a tier-A run: fail closed


def test_typed_in_deltas_are_never_tier_a(agreement_db):
    db, ids = agreement_db
    doc = agreement([Arm("f", "given", "k", (0.1, 0.2), "given", None, "B"),
                     Arm("f", "a1", "k", (0.2, 0.1), "measured", ids["a1"], "A")], ["x", "y"])
    given = next(a for a in doc["arms"] if a["source"] == "given")
    given["tier"] = "A"
    doc["tier"] = "A"
    with pytest.raises(IngestRefused, match=r"arms\[\d\]\.tier.*cannot be tier A"):
        ingest_document(doc, db)


def test_every_publishable_statistics_view_holds_tier_a_only(stats_db, agreement_db):
    for db in (stats_db[0], agreement_db[0]):
        with connect(db, read_only=True) as conn:
            for table in ("intervals", "comparisons", "agreement", "agreement_arms"):
                public = {t for (t,) in conn.query_all(
                    f"SELECT DISTINCT tier FROM {queries.relation('publishable', table)}")}
                assert public <= {"A"}, table
    with connect(stats_db[0], read_only=True) as conn:
        for table in ("intervals", "comparisons"):
            assert conn.query_one(f"SELECT count(*) FROM {table} WHERE tier = 'B'")[0] > 0


def test_run_ids_in_documents_are_the_runs_ids(stats_db):
    db, ids, dirs = stats_db
    doc = json.loads((dirs["candidate"] / COMPARISONS_JSON).read_text())
    assert doc["arms"][0]["run_id"] == run_id(load_metrics(dirs["candidate"])) == ids["candidate"]


def test_a_comparisons_document_cannot_claim_a_laxer_tier_than_its_rows(tmp_path):
    control = simple_run(tmp_path / "c", n_queries=8, control_name="c")
    arm = simple_run(tmp_path / "a", n_queries=8, control_name="a", offset=0.1)
    doc = compare_runs(control, [arm], seed=0, permutations=200, resamples=RESAMPLES,
                       progress=False)
    # the document is as restrictive as its most restrictive row (worked out from the rows)
    rows_tiers = {r["tier"] for r in doc["rows"]}
    assert doc["tier"] == ("B" if "B" in rows_tiers else "A")
    doc["rows"][0]["tier"] = "B"
    doc["tier"] = "A"
    with pytest.raises(IngestRefused, match="field 'tier'"):
        ingest_document(doc, tmp_path / "w.duckdb")
    assert not (tmp_path / "w.duckdb").exists() or \
        _count(tmp_path / "w.duckdb", "SELECT count(*) FROM comparisons") == 0


def _small_comparison(tmp_path):
    control = simple_run(tmp_path / "c", n_queries=8, control_name="c")
    arm = simple_run(tmp_path / "a", n_queries=8, control_name="a", offset=0.1)
    return compare_runs(control, [arm], seed=0, permutations=200, resamples=RESAMPLES,
                        progress=False)


def test_every_stored_delta_interval_agrees_with_its_verdict(stats_db):
    db, _, _ = stats_db
    stored = queries.comparisons("internal", db_path=db)
    excludes_zero = (stored.delta_lower > 0) | (stored.delta_upper < 0)
    assert len(stored) > 0
    assert (excludes_zero == (stored.verdict == "significant")).all()
    assert (stored.unadjusted_lower <= stored.delta + 1e-9).all()
    assert (stored.delta <= stored.unadjusted_upper + 1e-9).all()


def test_a_row_whose_interval_contradicts_its_verdict_is_refused(tmp_path):
    doc = _small_comparison(tmp_path)
    # 8 queries each improved by 0.1 on nDCG@10: p = 2 / 2^8, significant, interval above 0
    row = next(r for r in doc["rows"] if r["measure"] == "nDCG@10" and r["corpus"] == "pub"
               and r["query_class"] == "all")
    assert row["verdict"] == "significant" and row["delta_lower"] > 0
    forged = json.loads(json.dumps(doc))
    for r in forged["rows"]:
        if r is not None and (r["measure"], r["query_class"]) == ("nDCG@10", "all"):
            r["delta_lower"] = -0.05  # the old unadjusted habit: 0 inside beside "significant"
    with pytest.raises(IngestRefused, match="delta interval .* contains 0 but the verdict is "
                                            "'significant'"):
        ingest_document(forged, tmp_path / "w.duckdb")
    divisor = json.loads(json.dumps(doc))
    divisor["rows"][0]["holm_divisor"] = 2
    with pytest.raises(IngestRefused, match="holm_divisor"):
        ingest_document(divisor, tmp_path / "w.duckdb")


def test_a_schema_1_comparisons_document_is_refused(tmp_path):
    doc = dict(_small_comparison(tmp_path), schema_version=1)
    with pytest.raises(IngestRefused, match="schema version 1"):
        ingest_document(doc, tmp_path / "w.duckdb")


def test_migration_009_moves_a_stored_bootstrap_interval_to_the_unadjusted_columns(tmp_path):
    import shutil

    from warehouse import migrate
    from warehouse.schema import MIGRATIONS_DIR

    before = tmp_path / "migrations"
    before.mkdir()
    for path in sorted(MIGRATIONS_DIR.glob("00[1-8]_*.sql")):
        shutil.copy(path, before / path.name)
    db = tmp_path / "w.duckdb"
    migrate(db, migrations_dir=before)
    with connect(db, read_only=False, check_schema=False) as conn:
        conn.execute("INSERT INTO comparisons VALUES ('d', 'c', 'c', 'a', 'a', 'pub', 'A', 'all', "
                     "'nDCG@10', 8, 0.4, 0.5, 0.1, 0.02, 0.18, 0.95, 'bca', 8, 8, 0, 'exact', "
                     "NULL, 0.2, 0.0078125, 0.2, 1, 0.05, 'not significant', 0, "
                     "TIMESTAMP '2026-01-01 00:00:00')")
    applied = migrate(db)
    assert [m.version for m in applied if m.version >= 9][:1] == [9]
    with connect(db, read_only=True) as conn:
        got = conn.query_one("SELECT delta, delta_lower, delta_upper, delta_confidence, "
                             "holm_divisor, unadjusted_lower, unadjusted_upper, confidence, "
                             "interval_method, verdict FROM comparisons")
    # the schema-1 bootstrap [0.02, 0.18] excluded 0 beside "not significant": it is kept as
    # the unadjusted interval and no delta interval is claimed for the row
    assert tuple(got) == (0.1, None, None, None, None, 0.02, 0.18, 0.95, "bca", "not significant")
