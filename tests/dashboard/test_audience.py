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


# --------------------------------------------------------------------------- re-checks

def test_the_recheck_interval_is_bounded_and_defaults_to_five_minutes(tmp_path):
    from dashboard.audience import TeamConfigError, team_config

    base = {"HARNESS_TEAM_SNAPSHOTS": str(tmp_path)}
    assert team_config({}, base).recheck_seconds == 300
    assert team_config({}, {**base, "HARNESS_TEAM_RECHECK_SECONDS": "10"}).recheck_seconds == 10
    for bad in ("9", "3601", "soon", "1.5"):
        with pytest.raises(TeamConfigError, match="recheck_seconds"):
            team_config({}, {**base, "HARNESS_TEAM_RECHECK_SECONDS": bad})
    with pytest.raises(TeamConfigError, match="recheck_seconds"):
        team_config({"team": {"snapshots": str(tmp_path), "recheck_seconds": True}}, {})


def test_the_providers_newest_answer_decides_and_a_failed_recheck_reads_nothing(tmp_path):
    from dashboard.audience import Recheck, Team, audience_note, audience_of

    team = Team(snapshots=tmp_path, internal_groups=frozenset({"eval-internal"}))
    cookie = {"is_logged_in": True, "sub": "ines", "groups": ["eval-internal"]}
    assert audience_of(team, cookie) == "internal"
    # removed from the group at the provider: the cookie's claim no longer counts
    assert audience_of(team, cookie, Recheck(claims={"sub": "ines", "groups": []})) == \
        "publishable"
    failed = Recheck(error="https://idp/userinfo: HTTP 401")
    assert audience_of(team, cookie, failed) == "none"
    assert "HTTP 401" in audience_note(team, cookie, failed)
    # nobody logged in: the re-check is not asked
    assert audience_of(team, {"is_logged_in": False}, failed) == "none"


def test_a_group_list_too_large_for_a_token_is_said_not_taken_as_no_group(tmp_path):
    # Entra ID past its group limit sends no 'groups', only _claim_names pointing elsewhere
    from dashboard.audience import Team, audience_note, audience_of

    team = Team(snapshots=tmp_path, internal_groups=frozenset({"eval-internal"}))
    user = {"is_logged_in": True, "sub": "x", "_claim_names": {"groups": "src1"},
            "_claim_sources": {"src1": {"endpoint": "https://graph.example/x"}}}
    assert audience_of(team, user) == "publishable"
    assert "more groups than fit in a token" in audience_note(team, user)
    assert audience_note(team, {"is_logged_in": True, "sub": "x", "groups": []}) is None


def test_the_userinfo_call_is_bounded_and_checks_the_subject():
    import http.server
    import threading

    from dashboard import idp

    answers = {"/small": b'{"sub": "ines", "groups": ["a"]}',
               "/big": b'{"sub": "ines", "pad": "' + b"x" * (idp.MAX_BYTES + 10) + b'"}'}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            if self.path == "/.well-known/openid-configuration":
                body = json.dumps({"userinfo_endpoint": f"{base}{self.server.target}"}).encode()
            else:
                assert self.headers["Authorization"] == "Bearer tok"
                body = answers[self.path]
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        server.target = "/small"
        meta = f"{base}/.well-known/openid-configuration"
        assert idp.recheck(meta, "tok", "ines").claims["groups"] == ["a"]
        assert "another subject" in idp.recheck(meta, "tok", "eve").error
        idp._ENDPOINTS[meta + "?big"] = f"{base}/big"
        assert "larger than" in idp.recheck(meta + "?big", "tok", "ines").error
        assert "expose_tokens" in idp.recheck(meta, None, "ines").error
        assert "not an http(s) URL" in idp.recheck("file:///etc/passwd", "tok", "ines").error
    finally:
        server.shutdown()
