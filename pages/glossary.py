"""Glossary: the statistical and licensing terms the other pages use, defined once."""

from __future__ import annotations

import pandas as pd
from dashboard import common
from dashboard.glossary import TERMS


def render() -> None:
    common.title("Glossary", "What the terms on the other pages mean, and the paper "
                             "behind each method.")
    common.static_table(pd.DataFrame({"term": list(TERMS), "meaning": list(TERMS.values())}),
                        wrap=["meaning"])


common.run(render)
