"""Team mode's page gating through ``streamlit.testing.v1.AppTest``: the audience is worked
out by the app's own function (``dashboard.common.audience``) from the configuration and
``st.user``, which AppTest seeds (it cannot run a real OIDC login; tests/browser does).

The snapshots are published from the fixture warehouse by the ingester's own
``warehouse.snapshots.publish``: ``secretcorpus`` (tier B) is in ``internal.duckdb`` only.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from dashboard.audit import read
from tests.pages.conftest import download_bytes
from tests.pages.helpers import PAGE_FILES, table_text

INTERNAL_USER = {"is_logged_in": True, "email": "ines@example.org", "sub": "ines",
                 "groups": ["staff", "eval-internal"]}
EXTERNAL_USER = {"is_logged_in": True, "email": "eve@example.org", "sub": "eve",
                 "groups": ["staff"]}


@pytest.fixture(scope="module")
def snapshots(fixture_warehouse, tmp_path_factory):
    from warehouse.snapshots import publish

    directory = tmp_path_factory.mktemp("snapshots")
    publish(fixture_warehouse["db"], directory)
    return directory


@pytest.fixture
def team_app(app, monkeypatch, tmp_path):
    """``team_app(user, directory, anonymous="none")``: an AppTest of app.py in team mode
    (configured through ``$HARNESS_TEAM_*``, as a systemd unit would), seeded with ``user``;
    ``$HARNESS_WAREHOUSE`` names a file that does not exist, so a page that fell back to
    the embedded warehouse would show the missing-warehouse guidance."""
    def make(user, directory, anonymous="none"):
        at = app(tmp_path / "no-such-warehouse.duckdb")
        monkeypatch.setenv("HARNESS_TEAM_SNAPSHOTS", str(directory))
        monkeypatch.setenv("HARNESS_TEAM_INTERNAL_GROUPS", "eval-internal")
        monkeypatch.setenv("HARNESS_TEAM_ANONYMOUS", anonymous)
        monkeypatch.setenv("HARNESS_TEAM_AUDIT_LOG", str(tmp_path / "audit.jsonl"))
        if user is not None:
            at.user = dict(user)
        return at
    return make


def _text(at) -> str:
    parts = [table_text(at)]
    for kind in ("markdown", "caption", "info", "warning", "subheader", "metric", "badge"):
        for element in at.get(kind):
            parts.append(str(getattr(element, "value", "") or getattr(element, "label", "")))
    parts += [f.value.to_csv() for f in at.table]
    return "\n".join(parts)


def _external_only(snapshots, tmp_path):
    """A snapshots directory holding publishable.duckdb only: any read of the internal
    snapshot would fail loudly."""
    only = tmp_path / "external-only"
    only.mkdir()
    shutil.copy(snapshots / "publishable.duckdb", only / "publishable.duckdb")
    return only


@pytest.mark.parametrize("page", PAGE_FILES)
def test_an_external_user_gets_the_publishable_snapshot_on_every_page(team_app, snapshots,
                                                                     tmp_path, page):
    at = team_app(EXTERNAL_USER, _external_only(snapshots, tmp_path))
    at.run()
    # no tier switch, whatever the session or the URL asks for
    assert not [r for r in at.radio if r.key == "tier_view"]
    at.session_state["tier_view"] = "internal"
    at.query_params["tier_view"] = "internal"
    at.switch_page(f"pages/{page}").run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    text = _text(at)
    assert "secretcorpus" not in text and "CC-BY-NC" not in text
    assert "internal view" not in text and "no warehouse" not in text
    assert "publishable.duckdb" in "\n".join(c.value for c in at.sidebar.caption)
    assert not read(tmp_path / "audit.jsonl")


def test_an_external_user_cannot_download_internal_rows(team_app, snapshots, tmp_path):
    at = team_app(EXTERNAL_USER, _external_only(snapshots, tmp_path))
    at.run()
    at.session_state["tier_view"] = "internal"
    at.switch_page("pages/results.py").run()
    buttons = {b.label: b for b in at.get("download_button")}
    assert "Download CSV" in buttons
    for label, button in buttons.items():
        content = download_bytes(button).decode("utf-8", "replace")
        assert "secretcorpus" not in content and "not for publication" not in content, label
    provenance = json.loads(download_bytes(buttons["Download provenance"]))
    assert provenance["view"] == "publishable" and provenance["stamp"] is None


def test_an_internal_user_switches_views_and_every_internal_view_is_audited(team_app,
                                                                           snapshots, tmp_path):
    at = team_app(INTERNAL_USER, snapshots)
    at.run()
    assert at.radio(key="tier_view").options == ["Publishable (tier A only)",
                                                 "Internal (every tier; never publish)"]
    assert "internal.duckdb" in "\n".join(c.value for c in at.sidebar.caption)
    at.switch_page("pages/results.py").run()
    assert "secretcorpus" not in table_text(at)
    assert not read(tmp_path / "audit.jsonl")  # the publishable view is not audited
    at.radio(key="tier_view").set_value("internal").run()
    assert not at.exception and "secretcorpus" in table_text(at)
    records = read(tmp_path / "audit.jsonl")
    assert [(r["who"], r["event"], r["page"], r["view"]) for r in records] == [
        ("ines@example.org", "view", "results", "internal")]
    assert records[0]["filters"]["tier_view"] == "internal"
    # an internal download is recorded with its format and selection when it is taken
    csv_button = {b.label: b for b in at.get("download_button")}["Download CSV"]
    assert "secretcorpus" in download_bytes(csv_button).decode()
    csv_button.click().run()
    exports = [r for r in read(tmp_path / "audit.jsonl") if r["event"] == "export"]
    assert len(exports) == 1 and exports[0]["format"] == "csv"
    assert exports[0]["who"] == "ines@example.org" and exports[0]["view"] == "internal"
    assert set(exports[0]["selection"]) == {"runs", "corpora", "classes", "measures",
                                            "control"}


def test_without_login_the_configured_audience(team_app, snapshots, tmp_path):
    nobody = team_app({"is_logged_in": False}, snapshots, anonymous="none")
    nobody.run()
    assert not nobody.exception
    assert not nobody.dataframe and not nobody.table and not nobody.radio
    assert [t.value for t in nobody.title] == ["Retrieval evaluation"]
    assert "login is not configured" in nobody.info[0].value
    # the pages are not reachable by URL either: the only page registered is the login one
    with pytest.raises(ValueError, match="Known pages: \\['Log in'\\]"):
        nobody.switch_page("pages/results.py")
    assert not nobody.dataframe and "secretcorpus" not in _text(nobody)

    public = team_app({"is_logged_in": False}, _external_only(snapshots, tmp_path),
                      anonymous="publishable")
    public.run()
    public.switch_page("pages/results.py").run()
    assert not public.exception and not public.error
    assert "pub" in table_text(public) and "secretcorpus" not in table_text(public)
    assert not [r for r in public.radio if r.key == "tier_view"]


def test_a_secrets_file_team_section_configures_the_same(app, snapshots, tmp_path,
                                                         monkeypatch):
    for name in [k for k in os.environ if k.startswith("HARNESS_TEAM_")]:
        monkeypatch.delenv(name)
    at = app(tmp_path / "no-such-warehouse.duckdb")
    at.secrets["team"] = {"snapshots": str(_external_only(snapshots, tmp_path)),
                          "internal_groups": ["eval-internal"], "anonymous": "none"}
    at.user = dict(EXTERNAL_USER)
    at.run()
    at.switch_page("pages/results.py").run()
    assert not at.exception and not at.error
    assert "pub" in table_text(at) and "secretcorpus" not in table_text(at)
    assert not [r for r in at.radio if r.key == "tier_view"]
