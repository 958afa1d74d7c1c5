"""Glossary: the statistical and licensing terms the other pages use, defined once."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dashboard import common
from dashboard.glossary import TERMS


def render() -> None:
    common.title("Glossary", "What the terms on the other pages mean, and the paper "
                             "behind each method.")
    st.table(pd.DataFrame({"term": list(TERMS), "meaning": list(TERMS.values())})
             .set_index("term"))


common.run(render)
