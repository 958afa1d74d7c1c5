"""Named queries over the mixed-tier warehouse (values worked out by hand in conftest)."""

from __future__ import annotations

from warehouse.schema import available

import itertools
import math

import numpy as np
import pytest

from tests.warehouse.builders import simple_run
from tests.warehouse.conftest import (CANDIDATE, CANDIDATE_LATENCY, CONTROL, CONTROL_LATENCY, POOLED_ALL,
                                     PUB_ALL, SECRET_ALL, tier_b_numbers)
from warehouse import connect, ingest_results, queries
from warehouse.errors import UnknownRun

# Hand-worked rows.  control: pub all nDCG (0.5+0.3)/2, MRR (1.0+0.5)/2;
# candidate: pub all nDCG (0.6+0.5)/2, MRR (1.0+1.0)/2.
def _numbers_and_strings(frame):
    numbers, strings = [], []
    for value in frame.to_numpy().ravel():
        if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
            if not math.isnan(float(value)):
                numbers.append(float(value))
        elif value is not None:
            strings.append(str(value))
    return numbers, strings


MIXED = ("control", "candidate")


def test_publishable_view_never_shows_a_tier_b_value(mixed):
    db, ids = mixed
    tier_b = tier_b_numbers()
    public_numbers = ([v for run in PUB_ALL.values() for v in run.values()]
                      + [v for values in (CONTROL, CANDIDATE) for (c, _), ms in values.items()
                         if c == "pub" for v in ms.values()])
    # precondition: the fixture's tier-B numbers are distinguishable from the tier-A ones
    assert not any(math.isclose(a, b, abs_tol=1e-9) for a in tier_b for b in public_numbers)
    frames = {
        "metric_table": queries.metric_table("publishable", db_path=db),
        "deltas": queries.deltas("pub-control", None, "publishable", db_path=db),
        "mixed deltas": queries.deltas("control", None, "publishable", db_path=db),
        "pair nDCG": queries.per_query_pair("pub-control", "pub-candidate", "nDCG@10",
                                            "publishable", db_path=db),
        "mixed pair MRR": queries.per_query_pair("control", "candidate", "MRR", "publishable",
                                                 db_path=db),
        "values": queries.per_query_values("pub-candidate", "publishable", db_path=db),
        "mixed values": queries.per_query_values("candidate", "publishable", db_path=db),
        "mixed rankings": queries.rankings("candidate", "publishable", db_path=db),
        "latency": queries.latency(view="publishable", db_path=db),
    }
    assert not frames["metric_table"].empty and not frames["deltas"].empty
    mixed_ids = {ids[name] for name in MIXED}
    for name, frame in frames.items():
        numbers, strings = _numbers_and_strings(frame)
        leaked = [n for n in numbers if any(math.isclose(n, b, abs_tol=1e-9) for b in tier_b)]
        assert not leaked, f"{name} shows tier-B values {leaked}"
        assert not [s for s in strings if "secretcorpus" in s], f"{name} names the B corpus"
        # nothing of a run whose index held a tier-B corpus, not even its pub rows
        assert not mixed_ids & set(strings), f"{name} shows a row of a mixed run"
        if "tier" in frame:
            assert set(frame["tier"]) <= {"A"}, name
        if name.startswith("mixed"):
            assert frame.empty, name
    # latency of runs that touched a tier-B corpus is itself tier B (pub-only runs have none)
    assert frames["latency"].empty
    assert queries.choices("publishable", db_path=db)["corpus"] == ["pub"]
    assert set(queries.choices("publishable", db_path=db)["run_id"]) == {
        ids["pub-control"], ids["pub-candidate"]}


def test_metric_table_internal_and_publishable(mixed):
    db, ids = mixed
    internal = queries.metric_table("internal", db_path=db)
    # per mixed run: pub (lookup, summarize, all) + secretcorpus (lookup, all) + pooled all;
    # per pub-only run: pub's three rows; x 2 measures
    assert len(internal) == (2 * (3 + 2 + 1) + 2 * 3) * 2
    pooled = internal[internal.corpus == "pub+secretcorpus"]
    assert set(pooled.tier) == {"B"}
    public = queries.metric_table("publishable", db_path=db)
    assert len(public) == 2 * 3 * 2
    assert set(public.corpus) == {"pub"}
    assert set(public.control_name) == {"pub-control", "pub-candidate"}
    for run in ("control", "candidate"):
        for measure, expected in PUB_ALL[run].items():
            row = public[(public.control_name == f"pub-{run}") & (public.query_class == "all")
                         & (public.measure == measure)]
            assert row.value.item() == pytest.approx(expected)
            assert row.n.item() == 2
    for run in ("control", "candidate"):
        row = internal[(internal.control_name == run) & (internal.corpus == "pub+secretcorpus")
                       & (internal.measure == "nDCG@10")]
        assert row.value.item() == pytest.approx(POOLED_ALL[run]["nDCG@10"])
    filtered = queries.metric_table("internal", runs=[ids["candidate"][:10]],
                                    corpora=["secretcorpus"], classes=["all"],
                                    measures=["MRR"], db_path=db)
    assert filtered[["control_name", "corpus", "query_class", "measure"]].values.tolist() == [
        ["candidate", "secretcorpus", "all", "MRR"]]
    assert filtered.value.item() == pytest.approx(SECRET_ALL["candidate"]["MRR"])


def test_deltas_against_the_control(mixed):
    db, ids = mixed
    table = queries.deltas(ids["control"], [ids["candidate"]], "internal", classes=["all"],
                           db_path=db)
    assert set(table.run_id) == {ids["candidate"]}
    got = {(r.corpus, r.measure): r for r in table.itertuples()}
    for corpus, source in (("pub", PUB_ALL), ("secretcorpus", SECRET_ALL),
                           ("pub+secretcorpus", POOLED_ALL)):
        for measure in ("nDCG@10", "MRR"):
            row = got[(corpus, measure)]
            assert row.delta == pytest.approx(source["candidate"][measure]
                                              - source["control"][measure])
            assert row.control_value == pytest.approx(source["control"][measure])
            assert row.paired
    assert got[("pub", "nDCG@10")].delta == pytest.approx(0.55 - 0.4)
    assert got[("pub", "nDCG@10")].tier == "A"
    assert got[("pub+secretcorpus", "MRR")].tier == "B"


def test_per_query_pair_side_by_side(mixed):
    db, _ = mixed
    table = queries.per_query_pair("control", "candidate", "nDCG@10", "internal", db_path=db)
    assert table.query_id.tolist() == ["p1", "p2", "s1", "s2"]
    assert table.delta.tolist() == pytest.approx([0.6 - 0.5, 0.5 - 0.3, 0.713 - 0.777,
                                                  0.531 - 0.555])
    assert table.query_class.tolist() == ["lookup", "summarize", "lookup", "lookup"]
    # the mixed runs' pub queries shared an index with secretcorpus: not publishable
    assert queries.per_query_pair("control", "candidate", "nDCG@10", "publishable",
                                  db_path=db).empty
    public = queries.per_query_pair("pub-control", "pub-candidate", "nDCG@10", "publishable",
                                    db_path=db)
    assert public.query_id.tolist() == ["p1", "p2"]
    assert public.delta.tolist() == pytest.approx([0.6 - 0.5, 0.5 - 0.3])


def test_latency_percentiles_computed_in_sql(mixed):
    db, ids = mixed
    table = queries.latency(db_path=db).set_index("control_name")
    # control [10, 20, 30, 40]: rank (n-1)p -> p50 at 1.5: 20 + 0.5*10; p95 at 2.85: 30 + 0.85*10
    control = table.loc["control"]
    assert (control.p50, control.p95, control.p99) == pytest.approx((25.0, 38.5, 39.7))
    assert (control["max"], control["mean"], control.samples) == (40.0, 25.0, 4)
    # candidate [5, 1, 3] sorted [1, 3, 5]: p95 at 1.9: 3 + 0.9*2
    candidate = table.loc["candidate"]
    assert (candidate.p50, candidate.p95) == pytest.approx((3.0, 4.8))
    assert candidate.concurrency == 2
    for name, samples in (("control", CONTROL_LATENCY), ("candidate", CANDIDATE_LATENCY)):
        assert table.loc[name, ["p50", "p95", "p99"]].tolist() == pytest.approx(
            np.percentile(samples, [50, 95, 99]).tolist())
    assert queries.latency_samples("candidate", db_path=db).ms.tolist() == CANDIDATE_LATENCY


def test_runs_corpora_health(mixed):
    db, ids = mixed
    runs = queries.runs(db_path=db)
    assert sorted(runs.control_name) == ["candidate", "control", "pub-candidate", "pub-control"]
    assert set(runs.metric_engine) == {"pytrec_eval_terrier"}
    corpora = queries.corpora(db_path=db).set_index("name")
    assert corpora.loc["pub", ["licence", "tier", "runs"]].tolist() == ["MIT", "A", 4]
    assert corpora.loc["secretcorpus", ["licence", "tier"]].tolist() == ["CC-BY-NC-4.0", "B"]
    health = queries.health(db_path=db)
    assert health["runs"] == 4
    assert health["schema_version"] == max(m.version for m in available())
    assert health["corpora_by_tier"] == {"A": ["pub"], "B": ["secretcorpus"]}
    # mixed runs: 4 queries x 2 measures each; pub-only runs: 2 queries x 2 measures each
    assert health["rows"]["per_query"] == 2 * 4 * 2 + 2 * 2 * 2


def test_run_references(mixed):
    db, ids = mixed
    with connect(db, read_only=True) as conn:
        assert queries.resolve_runs(conn, ["candidate", ids["control"][:8]]) == [
            ids["candidate"], ids["control"]]
        assert queries.resolve_runs(conn, None) is None
        with pytest.raises(UnknownRun, match="no run 'nope'.*candidate"):
            queries.resolve_runs(conn, ["nope"])
        with pytest.raises(UnknownRun):
            queries.resolve_runs(conn, [ids["control"][:3]])  # too short to be a prefix
    with pytest.raises(ValueError, match=r"unknown view 'public'.*\['internal', 'publishable'\]"):
        queries.metric_table("public", db_path=db)


def test_publishable_view_fails_closed_on_inconsistent_rows(tmp_path):
    """A row marked A whose corpus the run records as B stays out (belt and braces)."""
    db = tmp_path / "w.duckdb"
    ingest_results(simple_run(tmp_path / "r"), db)
    assert len(queries.metric_table("publishable", db_path=db)) == 2
    with connect(db, read_only=False) as conn:
        conn.execute("UPDATE corpora SET tier = 'B'")
    assert queries.metric_table("publishable", db_path=db).empty
    assert queries.per_query_values("run", "publishable", db_path=db).empty
    assert len(queries.metric_table("internal", db_path=db)) == 2


def test_filters_are_bound_not_spliced(mixed):
    db, _ = mixed
    hostile = ["pub'); DROP TABLE runs; --", "x' OR '1'='1"]
    assert queries.metric_table("internal", corpora=hostile, db_path=db).empty
    assert len(queries.runs(db_path=db)) == 4  # the DROP never ran
    assert list(itertools.chain(queries.choices("internal", db_path=db)["corpus"])) == [
        "pub", "pub+secretcorpus", "secretcorpus"]


def test_deltas_say_when_two_runs_measured_differently(tmp_path, repo_root):
    """Finding 5 (warehouse side), the reviewer's repro: the toy run graded and again with
    --binary-relevance gives a delta over the same queries (paired), but not a comparable
    one: the two runs judge relevance differently."""
    from harness.cli import main as harness

    toy = repo_root / "examples" / "toy"
    db = tmp_path / "w.duckdb"
    common = ["score", "--qrels", str(toy / "qrels.txt"), "--run", str(toy / "run.txt"),
              "--query-classes", str(toy / "classes.tsv"), "--corpus-name", "toy",
              "--licence", "CC0-1.0", "--no-warehouse"]
    for name, extra in (("graded", []), ("again", []), ("binary", ["--binary-relevance"])):
        assert harness([*common, "--out", str(tmp_path / name), "--control-name", name,
                        *extra]) == 0
        ingest_results(tmp_path / name, db)
    table = queries.deltas("graded", None, "publishable", classes=["all"], db_path=db)
    by_run = {name: table[table.control_name == name] for name in ("again", "binary")}
    assert by_run["again"].comparable.all() and (by_run["again"].not_comparable_because == "").all()
    assert by_run["again"].delta.abs().max() == 0.0  # the same run scored the same way
    binary = by_run["binary"]
    assert binary.paired.all() and not binary.comparable.any()
    assert set(binary.not_comparable_because) == {
        "relevance_policy differs: the two files judge relevance differently"}
    tested = queries.deltas_tested("graded", ["binary"], "internal", db_path=db)
    assert not tested.comparable.any()


def test_comparability_notes_cover_setup_and_the_shared_index():
    from harness.claims.metrics import comparability_notes

    def claim(**retrieval):
        return {"metric_engine": {"name": "e", "version": "1"}, "relevance_policy": {},
                "corpora": [{"name": "syn", "version": "1", "sha256": "x", "tier": "A"}],
                "retrieval": {"granularity": "chunk", "scope": "corpus", "stage": "retrieve",
                              **retrieval},
                "index": {"corpora": ["syn"], "tier": "A"}}

    base = claim()
    assert comparability_notes(base, claim(mode="bm25")) == []  # an arm's own knob
    assert comparability_notes(base, claim(granularity="file")) == [
        "- retrieval.granularity differs: 'chunk' vs 'file'"]
    assert comparability_notes(base, claim(stage="rerank")) == [
        "- retrieval.stage differs: 'retrieve' vs 'rerank'"]
    wider = claim()
    wider["index"] = {"corpora": ["beir-x", "syn"], "tier": "B"}
    assert comparability_notes(base, wider) == [
        "- index corpora differ: ['syn'] vs ['beir-x', 'syn'] (documents of other corpora "
        "compete in a shared index)"]
