"""The team ingester (``warehouse ingest --watch URL --snapshots DIR``): every complete
submission applied exactly once with the local ingest's checks and the signature rule, bad
ones quarantined with a located reason, snapshots per audience, rebuilt from the store."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from harness.core.store import open_store
from harness.core.submissions import submit
from tests.warehouse.builders import build_results
from tests.warehouse.signing_builders import keys
from tests.warehouse.team_builders import (make_runs, read, run_ingester, submit_all,
                                           tier_values)
from warehouse import queries
from warehouse.ingester import Ingester
from warehouse.lease import Lease


@pytest.fixture(params=["directory", pytest.param("s3", marks=pytest.mark.service)])
def store_url(request, tmp_path):
    if request.param == "directory":
        (tmp_path / "store").mkdir()
        return str(tmp_path / "store")
    return request.getfixturevalue("s3_bucket")


@pytest.fixture
def team(tmp_path, store_url):
    """A store holding: 2 runs signed by the trusted key, 1 forged (a publishable licence,
    consistent pins, signed by another key), 1 unsigned, 1 whose per_query.jsonl was edited
    after it was written (its pin fails), 1 tier-B run signed by the trusted key."""
    ci, forger, trusted = keys(tmp_path)
    good = make_runs(tmp_path / "good", 2, prefix="good", key=ci)
    forged = make_runs(tmp_path / "forged", 1, prefix="forged", key=forger)
    unsigned = make_runs(tmp_path / "unsigned", 1, prefix="unsigned")
    broken = make_runs(tmp_path / "broken", 1, prefix="broken", key=ci)[0]
    lines = (broken / "per_query.jsonl").read_text().splitlines()
    (broken / "per_query.jsonl").write_text("\n".join(reversed(lines)) + "\n")
    os.environ["HARNESS_SIGNING_KEY"] = str(ci)
    try:
        internal = build_results(tmp_path / "internal", {("nc", "q1"): {"MRR": 0.25},
                                                         ("nc", "q2"): {"MRR": 0.75}},
                                 corpora={"nc": ("B", "CC-BY-NC-4.0")}, control_name="nc-run")
    finally:
        del os.environ["HARNESS_SIGNING_KEY"]
    store = open_store(store_url)
    digests = {name: submit_all(runs, store) for name, runs in (
        ("good", good), ("forged", forged), ("unsigned", unsigned), ("broken", [broken]),
        ("internal", [internal]))}
    return store_url, trusted, digests


def test_once_applies_each_submission_with_every_check(team, tmp_path, s3_env):
    url, trusted, digests = team
    snaps = tmp_path / "snaps"
    done = run_ingester(url, snaps, "--trusted-keys", str(trusted), env=s3_env)
    assert done.returncode == 0, done.stderr
    broken = digests["broken"][0]
    assert f"quarantined submission {broken}: submission {broken[:12]}/metrics.json: " \
           "field 'files.per_query.jsonl'" in done.stdout, done.stdout
    db = snaps / "warehouse.duckdb"
    states = dict(read(db, "SELECT digest, state FROM submissions"))
    assert sorted(states) == sorted(d for ds in digests.values() for d in ds)
    assert [d for d, s in states.items() if s == "quarantined"] == [broken]
    caps = dict(read(db, "SELECT digest, tier_cap FROM submissions WHERE state = 'applied'"))
    assert {d: caps[d] for d in digests["good"] + digests["internal"]} == \
        dict.fromkeys(digests["good"] + digests["internal"])
    assert caps[digests["forged"][0]] == caps[digests["unsigned"][0]] == "B"
    trust = dict(read(db, "SELECT digest, trust FROM submissions"))
    assert "not among the trusted keys" in trust[digests["forged"][0]]
    assert trust[digests["unsigned"][0]] == "unsigned: no signature.json"
    # the snapshots: tier-B rows physically absent from publishable.duckdb
    public, internal = snaps / "publishable.duckdb", snaps / "internal.duckdb"
    assert tier_values(public) == {"A"}
    assert tier_values(internal) == {"A", "B"}
    names = {n for (n,) in read(public, "SELECT control_name FROM runs")}
    assert names == {"good0", "good1"}
    assert {n for (n,) in read(internal, "SELECT control_name FROM runs")} == \
        {"good0", "good1", "forged0", "unsigned0", "nc-run"}
    assert read(public, "SELECT count(*) FROM per_query")[0][0] == 2 * 3 * 2
    assert read(public, "SELECT count(*) FROM submissions")[0][0] == 0
    for path in (public, internal):
        assert not os.access(path, os.W_OK) or os.geteuid() == 0
        assert oct(path.stat().st_mode & 0o777) == "0o444"
    listed = subprocess.run([sys.executable, "-m", "warehouse", "submissions", "--db", str(db)],
                            capture_output=True, text=True, timeout=120)
    assert listed.returncode == 0, listed.stderr
    assert f"{digests['unsigned'][0]} applied capped at tier B: unsigned: no signature.json" \
        in listed.stdout
    assert f"{broken} quarantined: submission {broken[:12]}/metrics.json" in listed.stdout
    # a second pass applies nothing twice
    again = run_ingester(url, snaps, "--trusted-keys", str(trusted), env=s3_env)
    assert again.returncode == 0 and "applied submission" not in again.stdout
    assert read(db, "SELECT count(*) FROM runs")[0][0] == 5
    assert read(db, "SELECT count(*) FROM per_query")[0][0] == 4 * 3 * 2 + 2


def test_without_trusted_keys_nothing_is_tier_a(team, tmp_path, s3_env):
    url, _, digests = team
    done = run_ingester(url, tmp_path / "snaps", env=s3_env)
    assert done.returncode == 0, done.stderr
    assert "every submission is stored capped at tier B" in done.stderr
    assert read(tmp_path / "snaps" / "publishable.duckdb", "SELECT count(*) FROM runs") == [(0,)]
    assert tier_values(tmp_path / "snaps" / "internal.duckdb") == {"B"}


def _view(path, audience):
    table = queries.metric_table(audience, db_path=path)
    return sorted(map(tuple, table.drop(columns=[c for c in table.columns
                                                 if "ingested" in c]).astype(str).values))


def test_the_warehouse_is_rebuilt_from_the_store_alone(team, tmp_path, s3_env):
    url, trusted, _ = team
    first, second = tmp_path / "first", tmp_path / "second"
    assert run_ingester(url, first, "--trusted-keys", str(trusted), env=s3_env).returncode == 0
    assert run_ingester(url, second, "--trusted-keys", str(trusted), env=s3_env).returncode == 0
    for name in ("publishable.duckdb", "internal.duckdb"):
        for audience in ("publishable", "internal"):
            a, b = _view(first / name, audience), _view(second / name, audience)
            assert a == b and a
    pick = "SELECT digest, state, stored_id, tier_cap, trust FROM submissions ORDER BY digest"
    assert read(first / "warehouse.duckdb", pick) == read(second / "warehouse.duckdb", pick)


def test_a_store_cut_mid_ingest_is_retried_with_nothing_half_applied(tmp_path, s3_server,
                                                                     s3_bucket, monkeypatch):
    from tests.servers.s3 import Cuttable
    from warehouse import ingester as module

    runs = make_runs(tmp_path / "runs", 6)
    digests = submit_all(runs, open_store(s3_bucket))
    proxy = Cuttable(s3_server.port)
    seen = []

    def cut_after_two(digest):
        seen.append(digest)
        if len(seen) == 2:
            proxy.cut()

    monkeypatch.setattr(module, "after_each", cut_after_two)
    ingester = Ingester(open_store(s3_bucket, endpoint_url=proxy.url), tmp_path / "snaps", {},
                        lease_ttl=30)
    from harness.core.store import StoreError

    with pytest.raises(StoreError, match=s3_bucket):
        ingester.cycle()
    db = tmp_path / "snaps" / "warehouse.duckdb"
    assert sorted(d for (d,) in read(db, "SELECT digest FROM submissions")) == sorted(seen)
    assert read(db, "SELECT count(*) FROM runs")[0][0] == 2
    assert read(db, "SELECT count(*) FROM per_query")[0][0] == 2 * 3 * 2
    assert not list((tmp_path / "snaps").glob(".ingest-work-*"))
    proxy.restore()
    monkeypatch.setattr(module, "after_each", None)
    report = ingester.cycle()
    assert sorted(report.applied) == sorted(set(digests) - set(seen))
    assert read(db, "SELECT count(*) FROM runs")[0][0] == 6
    assert read(db, "SELECT count(*) FROM per_query")[0][0] == 6 * 3 * 2
    proxy.close()


def test_once_exits_1_with_a_clear_error_when_the_store_is_unreachable(tmp_path, s3_server):
    from tests.servers.s3 import free_port

    env = {**os.environ, **s3_server.env,
           "AWS_ENDPOINT_URL_S3": f"http://127.0.0.1:{free_port()}"}
    done = run_ingester("s3://nowhere/x", tmp_path / "snaps", "--poll", "0.1", env=env)
    assert done.returncode == 1
    assert "error: store s3://nowhere/x" in done.stderr and "Traceback" not in done.stderr
    assert done.stderr.count("retrying") == 3


def test_a_second_ingester_stands_by_while_the_lease_is_held(tmp_path):
    (tmp_path / "store").mkdir()
    store = open_store(str(tmp_path / "store"))
    first, second = Lease(store, ttl=30), Lease(store, ttl=30)
    assert first.acquire() and not second.acquire()
    assert "pid" in second.holder
    assert first.acquire() and first.held()  # renewed
    first.release()
    assert second.acquire() and not first.held()
    second.release()
    expired = Lease(store, ttl=-1)  # a holder whose lease has run out (it stopped renewing)
    third = Lease(store, ttl=30)
    assert expired.acquire() and expired.held()
    assert third.acquire()  # taken over
    assert not expired.held() and not expired.acquire()


def test_the_quarantine_reason_names_a_file_the_manifest_does_not_match(tmp_path):
    (tmp_path / "store").mkdir()
    store = open_store(str(tmp_path / "store"))
    run = make_runs(tmp_path / "runs", 1)[0]
    digest = submit(run, store).digest
    planted = tmp_path / "store" / "submissions" / digest / "files" / "metrics.md"
    os.chmod(planted, 0o644)
    planted.write_text("# changed in the store\n")
    done = run_ingester(str(tmp_path / "store"), tmp_path / "snaps")
    assert done.returncode == 0
    reason = read(tmp_path / "snaps" / "warehouse.duckdb",
                  "SELECT reason FROM submissions WHERE digest = ?", [digest])[0][0]
    assert f"submissions/{digest}/files/metrics.md" in reason and "manifest" in reason


@pytest.fixture
def s3_env(request):
    """The environment a subprocess needs to reach the S3 server (when the store is S3)."""
    if "s3_server" in request.fixturenames or "s3_bucket" in request.fixturenames:
        return {**os.environ, **request.getfixturevalue("s3_server").env}
    return None




def test_a_document_submitted_alone_is_capped_at_b(tmp_path):
    from harness.core.canonical import canonical_json
    from tests.warehouse.answers_builders import answers_document
    from tests.warehouse.answers_builders import REFERENCE_ANSWERS

    doc = answers_document([a for a in REFERENCE_ANSWERS if a["corpus"] == "pub"])
    assert doc["tier"] == "A"
    (tmp_path / "answers.json").write_text(canonical_json(doc))
    (tmp_path / "store").mkdir()
    digest = submit(tmp_path / "answers.json", open_store(str(tmp_path / "store"))).digest
    done = run_ingester(str(tmp_path / "store"), tmp_path / "snaps")
    assert done.returncode == 0, done.stderr
    assert f"capped at tier B: submission {digest}: a claim document submitted alone" \
        in done.stdout
    internal = tmp_path / "snaps" / "internal.duckdb"
    assert read(internal, "SELECT DISTINCT tier FROM documents") == [("B",)]
    assert read(internal, "SELECT DISTINCT tier FROM answer_rows") == [("B",)]
    public = tmp_path / "snaps" / "publishable.duckdb"
    assert read(public, "SELECT count(*) FROM documents") == [(0,)]
    assert read(public, "SELECT count(*) FROM answer_rows") == [(0,)]


def test_a_check_that_fails_unforeseen_quarantines_that_submission_only(tmp_path, monkeypatch):
    from warehouse import ingester as module

    (tmp_path / "store").mkdir()
    store = open_store(str(tmp_path / "store"))
    runs = make_runs(tmp_path / "runs", 3)
    digests = submit_all(runs, store)
    real = module.load_results

    def fails_on_the_second(path):
        if (path / "metrics.json").read_text().find('"run1"') >= 0:
            raise KeyError("a field nobody expected")
        return real(path)

    monkeypatch.setattr(module, "load_results", fails_on_the_second)
    report = Ingester(store, tmp_path / "snaps", {}).cycle()
    assert sorted(report.applied) == sorted([digests[0], digests[2]])
    assert [d for d, _ in report.quarantined] == [digests[1]]
    assert "could not be checked: KeyError" in report.quarantined[0][1]


def test_a_disk_or_warehouse_error_is_one_line_and_retried(tmp_path, monkeypatch):
    from warehouse import ingester as module
    from warehouse.errors import WarehouseError

    (tmp_path / "store").mkdir()
    store = open_store(str(tmp_path / "store"))
    submit_all(make_runs(tmp_path / "runs", 1), store)
    full = str(tmp_path / "snaps" / "publishable.duckdb")
    for error in (OSError(28, "No space left on device", full),
                  WarehouseError("warehouse snaps/warehouse.duckdb: cannot be written")):
        def fails(*args, error=error, **kwargs):
            raise error
        monkeypatch.setattr(module.snapshots, "publish", fails)
        said: list[str] = []
        # a second ingester after the first gave up: the lease was released, no standing by
        code = Ingester(store, tmp_path / "snaps", {}).run(once=True, poll=0.0, retries=2,
                                                           say=said.append)
        assert code == 1
        assert len(said) == 2 and all(line.startswith("error: ") for line in said)
        assert str(error) in said[0] and "retrying (2 of 2)" in said[1]


def test_latency_from_unsigned_runinfo_never_reaches_tier_a(tmp_path):
    import json

    from harness.core.signing import load_trusted_keys

    ci, _, trusted = keys(tmp_path)
    run = make_runs(tmp_path / "runs", 1, key=ci)[0]
    # runinfo.json is outside the signature: anyone can write a latency into it
    info = json.loads((run / "runinfo.json").read_text()) \
        if (run / "runinfo.json").exists() else {}
    info["retrieval_latency_ms"] = {"samples": [1.0, 2.0, 3.0], "concurrency": 1}
    (run / "runinfo.json").write_text(json.dumps(info))
    (tmp_path / "store").mkdir()
    store = open_store(str(tmp_path / "store"))
    digest = submit(run, store).digest
    report = Ingester(store, tmp_path / "snaps", load_trusted_keys(trusted)).cycle()
    assert report.applied == [digest] and report.capped == []  # the signature is trusted
    internal = tmp_path / "snaps" / "internal.duckdb"
    assert read(internal, "SELECT DISTINCT tier FROM runs") == [("A",)]
    assert read(internal, "SELECT tier, samples FROM latency") == [("B", [1.0, 2.0, 3.0])]
    public = tmp_path / "snaps" / "publishable.duckdb"
    assert read(public, "SELECT count(*) FROM runs") == [(1,)]
    assert read(public, "SELECT count(*) FROM latency") == [(0,)]
