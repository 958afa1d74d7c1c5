"""The dashboard: the pages it serves, registered as data, and the helpers they share
(cached loaders over ``warehouse.queries``, the tier view, formatting, table rendering).

Each entry of :data:`PAGES` is ``(file in pages/, title, icon)``; ``app.py`` turns the list
into ``st.navigation``, first entry first (and default).  A new page is one file in
``pages/`` and one line below.  Pages are thin: read widgets, call one cached loader
(:mod:`dashboard.common`), render.  They hold no SQL; ``pages/`` holds pages only.
"""

from __future__ import annotations

PAGES: list[tuple[str, str, str]] = [
    ("overview.py", "Overview", ":material/monitoring:"),
    ("results.py", "Results", ":material/table_chart:"),
    ("compare.py", "Compare", ":material/compare_arrows:"),
    ("agreement.py", "Agreement", ":material/scatter_plot:"),
    ("latency.py", "Latency", ":material/timer:"),
    ("certificates.py", "Certificates", ":material/verified:"),
    ("answers.py", "Answers", ":material/rule:"),
    ("migration.py", "Migration", ":material/swap_horiz:"),
    ("corpora.py", "Corpora", ":material/library_books:"),
    ("judge.py", "Judge", ":material/gavel:"),
    ("glossary.py", "Glossary", ":material/menu_book:"),
]
