"""Relevance labels outside the 32-bit range are refused, never silently scored.

trec_eval keeps a label in a C integer: from 2^32 - 1 a label zeroed every measure, and
from 2^63 pytrec_eval crashed with a SystemError.  The readers refuse such a label naming
file, line and field (tests/harness/core/test_formats_fast.py); qrels handed to ``score``
directly are refused naming the query and document.
"""

from __future__ import annotations

import pytest

from harness.core.formats import RELEVANCE_MAX, RELEVANCE_MIN
from harness.evaluation.scoring import score


@pytest.mark.parametrize("label", [2 ** 32 - 1, 2 ** 31, 2 ** 63, 10 ** 30, -2 ** 31 - 1])
def test_score_refuses_labels_outside_the_range(label):
    with pytest.raises(ValueError) as info:
        score({"q1": {"d1": 1, "d2": label}}, {"q1": {"d1": 0.5, "d2": 0.25}}, ["MRR", "nDCG@10"])
    assert "field 'relevance'" in str(info.value) and "'d2'" in str(info.value)
    assert "-2147483648 .. 2147483647" in str(info.value)


@pytest.mark.slow  # about 15-35 s: scoring with a 2**31-1 label
def test_labels_at_the_edges_are_scored():
    assert (RELEVANCE_MIN, RELEVANCE_MAX) == (-2 ** 31, 2 ** 31 - 1)
    result = score({"q1": {"d1": RELEVANCE_MAX, "d2": RELEVANCE_MIN, "d3": 1}},
                   {"q1": {"d2": 0.9, "d1": 0.5, "d3": 0.1}}, ["MRR", "P@5"])
    # d2 (negative: judged non-relevant) first, d1 relevant at rank 2
    assert result.per_query == {"q1": {"MRR": 0.5, "P@5": 2 / 5}}
    assert result.negative_labels == 1
