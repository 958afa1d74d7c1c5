"""Team mode's audience mapping and audit log (dashboard.audience, dashboard.audit): pure
functions, no streamlit."""

from __future__ import annotations

import json
import threading
import tomllib
from datetime import datetime, timezone
from pathlib import Path

import pytest

from dashboard import audit
from dashboard.audience import (INTERNAL, NONE, PUBLISHABLE, Team, TeamConfigError,
                                audience_of, claimed_groups, snapshot_for, team_config,
                                views_for, who)

REPO = Path(__file__).resolve().parents[2]
TEAM = Team(snapshots=Path("/srv/eval"), group_claim="groups",
            internal_groups=frozenset({"eval-internal", "research"}), anonymous=NONE)


def test_no_team_section_and_no_variable_is_the_embedded_dashboard():
    assert team_config({}, {}) is None
    assert team_config({"auth": {"client_id": "x"}}, {"HARNESS_WAREHOUSE": "w.duckdb"}) is None
    assert views_for(None) == ("publishable", "internal")


def test_the_team_section_of_the_secrets_file():
    team = team_config({"team": {"snapshots": "/srv/eval", "group_claim": "roles",
                                 "internal_groups": ["eval-internal"],
                                 "anonymous": "publishable"}}, {})
    assert team == Team(snapshots=Path("/srv/eval"), group_claim="roles",
                        internal_groups=frozenset({"eval-internal"}), anonymous=PUBLISHABLE)
    assert team.audit_path == Path("/srv/eval/audit.jsonl")


def test_the_environment_when_the_secrets_have_no_team_section():
    team = team_config({}, {"HARNESS_TEAM_SNAPSHOTS": "/srv/eval",
                            "HARNESS_TEAM_INTERNAL_GROUPS": "a, b,,",
                            "HARNESS_TEAM_AUDIT_LOG": "/var/log/eval/audit.jsonl"})
    assert team.internal_groups == frozenset({"a", "b"})
    # defaults: the claim is `groups`, nobody without login reads anything
    assert team.group_claim == "groups" and team.anonymous == NONE
    assert team.audit_path == Path("/var/log/eval/audit.jsonl")


@pytest.mark.parametrize("section, field", [
    ({"anonymous": "publishable"}, "snapshots"),
    ({"snapshots": "/s", "anonymous": "internal"}, "anonymous"),
    ({"snapshots": "/s", "anonymous": "everyone"}, "anonymous"),
    ({"snapshots": "/s", "internal_groups": [1, 2]}, "internal_groups"),
    ({"snapshots": "/s", "group_claim": ""}, "group_claim"),
])
def test_a_bad_team_section_is_refused_naming_the_field(section, field):
    with pytest.raises(TeamConfigError, match=field):
        team_config({"team": section}, {})


def test_the_committed_example_is_a_valid_configuration():
    example = tomllib.loads((REPO / ".streamlit" / "secrets.example.toml").read_text())
    team = team_config(example, {})
    assert team is not None and team.internal_groups and team.group_claim
    assert {"redirect_uri", "cookie_secret", "client_id", "client_secret",
            "server_metadata_url"} <= set(example["auth"])


@pytest.mark.parametrize("user, expected", [
    (None, NONE),
    ({}, NONE),
    ({"email": "a@x", "groups": ["eval-internal"]}, NONE),            # not logged in
    ({"is_logged_in": False, "groups": ["eval-internal"]}, NONE),
    ({"is_logged_in": "true", "groups": ["eval-internal"]}, NONE),   # only True is true
    ({"is_logged_in": True, "groups": ["eval-internal"]}, INTERNAL),
    ({"is_logged_in": True, "groups": ["staff", "research"]}, INTERNAL),
    ({"is_logged_in": True, "groups": "research"}, INTERNAL),         # one group as a string
    ({"is_logged_in": True, "groups": ["staff"]}, PUBLISHABLE),
    ({"is_logged_in": True, "groups": ["Eval-Internal"]}, PUBLISHABLE),  # names are exact
    ({"is_logged_in": True, "groups": []}, PUBLISHABLE),
    ({"is_logged_in": True}, PUBLISHABLE),                            # no claim
    ({"is_logged_in": True, "groups": {"eval-internal": 1}}, PUBLISHABLE),  # not a list
    ({"is_logged_in": True, "roles": ["eval-internal"]}, PUBLISHABLE),  # another claim
])
def test_the_group_claim_maps_to_an_audience(user, expected):
    assert audience_of(TEAM, user) == expected


def test_the_anonymous_audience_is_configurable():
    anonymous = Team(snapshots=Path("/s"), anonymous=PUBLISHABLE)
    assert audience_of(anonymous, None) == PUBLISHABLE
    assert audience_of(anonymous, {"is_logged_in": False}) == PUBLISHABLE


def test_the_claim_name_is_configurable():
    team = Team(snapshots=Path("/s"), group_claim="roles",
                internal_groups=frozenset({"eval-internal"}))
    assert audience_of(team, {"is_logged_in": True, "roles": ["eval-internal"]}) == INTERNAL
    assert audience_of(team, {"is_logged_in": True, "groups": ["eval-internal"]}) == PUBLISHABLE
    assert claimed_groups({"roles": ["a", 3, None, "b"]}, "roles") == frozenset({"a", "b"})


def test_each_audience_reads_one_snapshot_and_its_views():
    assert snapshot_for(TEAM, INTERNAL) == Path("/srv/eval/internal.duckdb")
    assert snapshot_for(TEAM, PUBLISHABLE) == Path("/srv/eval/publishable.duckdb")
    assert snapshot_for(TEAM, NONE) is None
    assert views_for(INTERNAL) == ("publishable", "internal")
    assert views_for(PUBLISHABLE) == ("publishable",)
    assert views_for(NONE) == ()


def test_who_names_a_person():
    assert who({"is_logged_in": True, "email": "a@x", "sub": "1"}) == "a@x"
    assert who({"is_logged_in": True, "sub": "1"}) == "1"
    assert who({"is_logged_in": False, "email": "a@x"}) == "anonymous"
    assert who(None) == "anonymous"


def test_the_audit_log_appends_whole_lines(tmp_path):
    log = tmp_path / "deep" / "audit.jsonl"
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    audit.record(log, "a@x", "view", {"page": "results", "filters": {"c": ["pub"]}}, now=when)
    audit.record(log, "b@x", "export", {"format": "csv"}, now=when)
    lines = log.read_text().splitlines()
    assert [json.loads(line) for line in lines] == [
        {"at": "2026-01-02T03:04:05+00:00", "who": "a@x", "event": "view", "page": "results",
         "filters": {"c": ["pub"]}},
        {"at": "2026-01-02T03:04:05+00:00", "who": "b@x", "event": "export", "format": "csv"}]
    # concurrent writers (sessions) never interleave within a line and lose nothing
    threads = [threading.Thread(target=lambda i=i: [audit.record(log, f"u{i}", "view",
                                                                 {"pad": "x" * 2000})
                                                    for _ in range(20)])
               for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    records = audit.read(log)
    assert len(records) == 2 + 8 * 20
    assert all(r["pad"] == "x" * 2000 for r in records[2:])
