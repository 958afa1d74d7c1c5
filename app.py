"""The dashboard: ``streamlit run app.py`` (``make demo`` fills the warehouse and starts it).

Reads the warehouse named by ``$HARNESS_WAREHOUSE`` (default ``./warehouse.duckdb``) and
never writes it.  Pages are registered as data in :mod:`pages` (file, title, icon); the tier
view chosen here in the sidebar applies to every page.

In team mode (``[team]`` in ``.streamlit/secrets.toml`` or ``$HARNESS_TEAM_SNAPSHOTS``,
docs/team.md) the person's audience (:func:`dashboard.common.audience`, from the OIDC
login's group claim) decides which snapshot is read and whether the tier switch is shown;
a person with no audience sees the login button only, and every page run in the internal
view is recorded in the audit log before it is shown.  With login, the groups are re-read
from the identity provider at most ``recheck_seconds`` apart (docs/team.md, "Login").
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import PAGES
from dashboard.common import (APP_KEY, ICON_SVG, VIEW_KEY, VIEW_LABELS, audience,
                              audience_note, audit_view, db_path, login_configured,
                              md_code, views)

HERE = Path(__file__).resolve().parent

st.set_page_config(page_title="Retrieval evaluation", page_icon=ICON_SVG,
                   layout="wide")

team_audience = audience()
note = audience_note() if team_audience is not None else None
if team_audience is not None:
    with st.sidebar:
        if st.user.is_logged_in:
            st.caption(f"Signed in as {md_code(st.user.get('email') or st.user.get('sub'))} "
                       f"({team_audience} audience)")
            st.button("Log out", key="_logout", on_click=st.logout)
        elif login_configured():
            st.button("Log in", key="_login", on_click=st.login, type="primary")
    if team_audience == "none":
        def login_page() -> None:
            st.title("Retrieval evaluation")
            if note:
                st.warning(note)
            else:
                st.info("Log in to see the results." if login_configured() else
                        "This dashboard serves no one without login, and login is not "
                        "configured.")

        # one hidden page: the sidebar lists no page (nor the files under pages/) before login
        st.navigation([st.Page(login_page, title="Log in", default=True)],
                      position="hidden").run()
        st.stop()

if note:
    st.warning(note)

navigation = st.navigation([
    st.Page(HERE / "pages" / file, title=title, icon=icon, default=(i == 0))
    for i, (file, title, icon) in enumerate(PAGES)])
st.session_state[APP_KEY] = True  # the page this run shows was built here (dashboard.common)

with st.sidebar:
    if len(views()) > 1:
        st.radio("Tier view", views(), key=VIEW_KEY, format_func=VIEW_LABELS.get,
                 help="Publishable shows only rows whose every contributing corpus is tier A "
                      "(publishable licence). Internal shows every tier and must never be "
                      "published.")
    else:
        st.session_state.pop(VIEW_KEY, None)
        st.caption(f"Tier view: {VIEW_LABELS['publishable']}")
    st.caption(f"Warehouse: {md_code(db_path())}")

audit_view(navigation.url_path or navigation.title)
navigation.run()
