"""Every user-supplied string in page text is shown as text (issue #16).

The review's repro: a corpus name with backticks broke out of its code span on the Overview
page and rendered a link.  Here a warehouse holds corpora and runs with hostile names; every
page is rendered in both views with AppTest, and every element that reads Markdown (titles,
subheaders, Markdown, captions, notices, expander labels) is rendered with an independent
CommonMark implementation: no link, image or script comes out of a name, each name shown on
the Overview is shown as it was, and no Streamlit directive or math survives outside code.
"""

from __future__ import annotations

import re

import pytest

from dashboard import PAGES
from dashboard.common import VIEWS
from tests.markdown_check import ACTIVE, TAG, render, text_of
from tests.warehouse.builders import build_results

#: the review's name, and names that would open a link, an image, HTML, a directive or math
NAMES = {
    "x`](javascript:alert(1))[`": ("A", "MIT"),
    "x` [click](http://evil.invalid) `y": ("A", "MIT"),
    "<img src=x onerror=alert(1)>": ("A", "MIT"),
    "[link](http://evil.invalid) ![i](http://evil.invalid/i.png)": ("B", "CC-BY-NC-4.0"),
    "$x^2$ :red[big] **bold** <b>b</b>": ("B", "CC-BY-NC-4.0"),
}
RUNS = ["run `](javascript:alert(3))", "run ` [a](http://evil.invalid) `", "<script>alert(4)</script>",
        "run [a](b)", "run $y$"]


@pytest.fixture(scope="module")
def hostile_warehouse(tmp_path_factory):
    from warehouse import ingest_results

    root = tmp_path_factory.mktemp("hostile")
    db = root / "w.duckdb"
    for i, (name, (tier, licence)) in enumerate(NAMES.items()):
        values = {(name, f"q{j}"): {"nDCG@10": j / 10, "MRR": 1 / j} for j in range(1, 4)}
        out = build_results(root / f"r{i}", values, corpora={name: (tier, licence)},
                            control_name=RUNS[i], latency=[1.0, 2.0, 3.0])
        ingest_results(out, db)
    return db


def elements(at) -> list[str]:
    """The Markdown source of every element that renders Markdown."""
    found = []
    for kind in ("title", "subheader", "markdown", "caption", "info", "warning", "error",
                 "success"):
        found += [e.value for e in getattr(at, kind)]
    found += [e.label for e in at.expander]
    return found


def outside_code(source: str) -> str:
    """``source`` without its inline code spans (where nothing is interpreted)."""
    return re.sub(r"(`+)(?!`).*?(?<!`)\1(?!`)", " ", source)


def check(source: str) -> None:
    rendered = render(source)
    active = [tag for tag in TAG.findall(rendered) if ACTIVE.search(tag)]
    assert not active, f"{active} from {source!r}"
    plain = outside_code(source)
    for directive in (":red[", "$x^2$", "$y$"):
        assert directive not in plain, f"{directive!r} unescaped in {source!r}"


@pytest.mark.parametrize("view", VIEWS)
@pytest.mark.parametrize("page", [file for file, _, _ in PAGES])
def test_no_page_turns_a_name_into_markup(app, hostile_warehouse, page, view):
    at = app(hostile_warehouse)
    at.run()
    at.radio(key="tier_view").set_value(view).run()
    at.switch_page(f"pages/{page}").run()
    assert not at.exception, at.exception
    for source in elements(at):
        check(source)


def test_the_overview_shows_each_corpus_name_as_it_is(app, hostile_warehouse):
    at = app(hostile_warehouse)
    at.run()
    at.radio(key="tier_view").set_value("internal").run()
    listing = next(m.value for m in at.markdown if "**Tier A**" in m.value)
    text = text_of(render(listing))
    for name in NAMES:
        assert name in text, (name, text)
    assert text.index("Tier A") < text.index("x`](javascript:alert(1))[`") < text.index("Tier B")
