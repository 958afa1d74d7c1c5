"""The Judge page in team mode, in Debian's Chromium (issue 38 items 3 and 7): two people
logged in through the OIDC provider mock label the same pairs with the keyboard; each label
is submitted to the shared store (moto's S3 API) under the login identity and applied once
by the team ingester; the agreement of the two is shown; the external person is never shown
the tier-B task, whose texts never reach the publishable snapshot.

ines is in the internal group, eve is not (tools/team_demo.py).  The tier-A task is signed
by the trusted key (the ingester caps an unsigned task at tier B, as it caps a run)."""

from __future__ import annotations

import hashlib

import duckdb
import pytest

from tests.browser.helpers import launched_chromium, wait_settled
from tests.browser.login import login, page_text, team_dashboard
from tests.pages.judge_fixture import PRIVATE, PUBLIC, write_task
from tests.warehouse.signing_builders import keys

pytestmark = [pytest.mark.browser, pytest.mark.service]


def _label(tab, base: str, grades) -> str:
    tab.goto(f"{base}/judge")
    wait_settled(tab)
    assert "public pool" in tab.content()
    # the pairs in pool order; the query's terms marked, the document's own markup as text
    shown = ("The recording equipment is set up.", "Lunch <b>menu</b> & more.",
             "The budget for the recording.")
    marked = (["recording", "equipment"], [], ["budget"])
    for grade, text, terms in zip(grades, shown, marked):
        assert text in page_text(tab)
        assert tab.locator("mark").all_inner_texts() == terms
        tab.keyboard.press(str(grade))
        wait_settled(tab)
    return page_text(tab)


def pseudonym(identity: str) -> str:
    """As migration 012's publishable view names a rater (computed here independently)."""
    return "rater-" + hashlib.sha256(identity.encode()).hexdigest()[:12]


def _options(tab) -> list[str]:
    """The Task selectbox's options, as its opened list shows them."""
    tab.locator("[data-testid='stSelectbox']").first.click()
    options = tab.get_by_role("option").all_inner_texts()
    tab.keyboard.press("Escape")
    wait_settled(tab)
    return options


def _rows(path, sql):
    with duckdb.connect(str(path), read_only=True) as conn:
        return conn.execute(sql).fetchall()


def test_two_people_label_the_same_pairs_through_the_store(tmp_path, s3_bucket):
    pytest.importorskip("oidc_provider_mock")
    pytest.importorskip("authlib")
    from harness.core.signing import load_trusted_keys
    from harness.core.store import open_store
    from harness.core.submissions import submit
    from warehouse.ingester import Ingester

    ci, _, trusted = keys(tmp_path)
    public = write_task(tmp_path / "public-task", PUBLIC, "public pool", key=ci)
    write_task(tmp_path / "private-task", PRIVATE, "private pool", key=ci)
    store = open_store(s3_bucket)
    for task in ("public-task", "private-task"):
        submit(tmp_path / task, store)
    (tmp_path / "team").mkdir()
    with team_dashboard(tmp_path / "team", store=s3_bucket) as (base, _, snapshots):
        ingester = Ingester(store, snapshots, load_trusted_keys(trusted))
        report = ingester.cycle()
        assert len(report.applied) == 2 and report.published
        # the unsigned-equivalent rule: the tier-B task stays B; only the tier-A task is public
        public_db, internal_db = snapshots / "publishable.duckdb", snapshots / "internal.duckdb"
        assert _rows(public_db, "SELECT name, tier FROM judging_tasks") == [("public pool", "A")]
        assert not _rows(public_db, "SELECT 1 FROM task_texts WHERE task_id <> "
                                    f"'{public}'")
        with launched_chromium() as browser:
            ines = login(browser, base, "ines")
            text = _label(ines, base, (2, 0, 1))
            assert "Nothing left in your queue." in text
            eve = login(browser, base, "eve")
            text = _label(eve, base, (2, 1, 1))
            assert "Nothing left in your queue." in text and "publishable view" in text
            assert "private pool" not in eve.content()
            report = ingester.cycle()
            assert len(report.applied) == 6 and not report.quarantined
            assert ingester.cycle().applied == []  # exactly once
            # no identity and no local path in the publishable snapshot
            assert _rows(public_db, "SELECT count(*), count(*) FILTER (rater LIKE '%@%') "
                                    "FROM judgments") == [(6, 0)]
            assert _rows(public_db, "SELECT DISTINCT source FROM judging_tasks") == [("",)]
            held = _rows(internal_db, "SELECT rater, query_id, doc_id, label FROM judgments "
                                      "ORDER BY rater, query_id, doc_id")
            assert held == [("eve@example.org", "q1", "d1", 2), ("eve@example.org", "q1", "d2", 1),
                            ("eve@example.org", "q2", "d3", 1), ("ines@example.org", "q1", "d1", 2),
                            ("ines@example.org", "q1", "d2", 0), ("ines@example.org", "q2", "d3", 1)]
            assert _rows(internal_db, "SELECT count(*) FROM submissions WHERE kind = 'labels' "
                                      "AND state = 'applied'") == [(6,)]
            # the agreement, from the applied labels (a new session holds none of its own):
            # by hand as in tests/pages/test_judge_page.py, kappa 0.5
            eve.goto(f"{base}/judge")
            wait_settled(eve)
            text = page_text(eve)
            # eve reads the publishable snapshot: raters by pseudonym, her own included
            eve_as, ines_as = (pseudonym(f"{n}@example.org") for n in ("eve", "ines"))
            first, second = sorted([eve_as, ines_as])
            assert f"kappa {first} vs {second} over 3 pairs: 0.500" in text
            assert "ines@example.org" not in text
            assert "3 labelled by you, 0 left for you; pool 3 of 3 pairs done" in text
            options = _options(eve)
            assert len(options) == 1 and options[0].startswith("public pool")
            # the internal person sees the tier-B task in the internal view
            ines.goto(f"{base}/judge")
            wait_settled(ines)
            ines.get_by_text("Internal (every tier; never publish)").click()
            wait_settled(ines)
            assert sorted(o.split(" · ")[0] for o in _options(ines)) == ["private pool",
                                                                          "public pool"]
