"""The dashboard: ``streamlit run app.py`` (``make demo`` fills the warehouse and starts it).

Reads the warehouse named by ``$HARNESS_WAREHOUSE`` (default ``./warehouse.duckdb``) and
never writes it.  Pages are registered as data in :mod:`pages` (file, title, icon); the tier
view chosen here in the sidebar applies to every page.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from dashboard import PAGES
from dashboard.common import (APP_KEY, ICON_SVG, VIEW_KEY, VIEW_LABELS, VIEWS, db_path,
                              md_code)

HERE = Path(__file__).resolve().parent

st.set_page_config(page_title="Retrieval evaluation", page_icon=ICON_SVG,
                   layout="wide")

navigation = st.navigation([
    st.Page(HERE / "pages" / file, title=title, icon=icon, default=(i == 0))
    for i, (file, title, icon) in enumerate(PAGES)])
st.session_state[APP_KEY] = True  # the page this run shows was built here (dashboard.common)

with st.sidebar:
    st.radio("Tier view", VIEWS, key=VIEW_KEY, format_func=VIEW_LABELS.get,
             help="Publishable shows only rows whose every contributing corpus is tier A "
                  "(publishable licence). Internal shows every tier and must never be published.")
    st.caption(f"Warehouse: {md_code(db_path())}")

navigation.run()
