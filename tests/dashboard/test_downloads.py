"""Download file names carry the selection (issue 29, item 8)."""

from __future__ import annotations

from dashboard.downloads import file_name


def test_a_file_name_says_view_corpora_measures_and_control():
    assert file_name("publishable", ["alt", "pub"], ["nDCG@10", "MRR"], "bm25", "tex") == \
        "results-publishable-alt,pub-nDCG@10,MRR-vs-bm25.tex"
    assert file_name("internal", ["pub"], ["nDCG@10"], None, "csv") == \
        "results-internal-pub-nDCG@10.csv"
    # a pooled corpus keeps its name
    assert file_name("publishable", ["alt", "alt+pub"], ["R@10"], None, "md") == \
        "results-publishable-alt,alt+pub-R@10.md"


def test_many_names_are_counted_and_unsafe_characters_replaced():
    assert file_name("publishable", ["a", "b", "c", "d"], ["M1", "M2", "M3", "M4", "M5"],
                     None, "md") == "results-publishable-4-corpora-5-measures.md"
    name = file_name("internal", ["corpus<a>|b", "../etc"], ["file:R@10"], "x/y z",
                     "provenance.json")
    assert "/" not in name and "<" not in name and "|" not in name and ":" not in name
    assert name == "results-internal-corpus_a_b,etc-file_R@10-vs-x_y_z.provenance.json"
