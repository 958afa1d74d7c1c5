"""The field map: dotted paths with [*] and [N], and every wrong answer named."""

from __future__ import annotations

import math

import pytest

from harness.retrieval.backends.fieldmap import FieldMap, ResponseError, parse_path

OPENSEARCH = "hits=hits.hits[*],doc_id=_id,score=_score"


def test_paths_parse_into_steps():
    assert parse_path("hits.hits[*]") == ("hits", "hits", "*")
    assert parse_path("data[0].results") == ("data", 0, "results")
    for bad in ("", "a.", ".a", "a..b", "a[x]", "a]"):
        with pytest.raises(ValueError):
            parse_path(bad)


def test_an_opensearch_answer_is_read_in_the_systems_order():
    doc = {"hits": {"total": 3, "hits": [{"_id": "b_1", "_score": 2.5},
                                         {"_id": "a_0", "_score": 2.5},
                                         {"_id": "c_4", "_score": 1}]}}
    assert FieldMap.parse(OPENSEARCH).ranking(doc, "q1") == [
        ("b_1", 2.5), ("a_0", 2.5), ("c_4", 1.0)]


def test_nested_ids_an_index_step_and_no_score():
    doc = {"data": [{"results": [{"doc": {"id": 7}}, {"doc": {"id": "x_2"}}]}]}
    fm = FieldMap.parse("hits=data[0].results,doc_id=doc.id")
    # a list named without [*] is the list of hits; without score, rank order: 2, 1
    assert fm.ranking(doc, "q") == [("7", 2.0), ("x_2", 1.0)]
    assert fm.describe() == {"hits": "data[0].results", "doc_id": "doc.id", "score": None}


def test_an_empty_hit_list_is_an_empty_ranking():
    assert FieldMap.parse(None).ranking({"hits": []}, "q") == []


@pytest.mark.parametrize("doc, needle", [
    ({"results": []}, "query q9: response field 'hits' is missing"),
    ({"hits": {"a": 1}}, "response field 'hits' is dict, not a list"),
    ({"hits": [{"doc_id": "a"}]}, "response field 'hits[0].score' is missing"),
    ({"hits": [{"doc_id": "a", "score": math.nan}]}, "'hits[0].score' is nan, not a finite"),
    ({"hits": [{"doc_id": "a", "score": "1.0"}]}, "is '1.0', not a finite number"),
    ({"hits": [{"doc_id": "a", "score": True}]}, "is True, not a finite number"),
    ({"hits": [{"doc_id": None, "score": 1}]}, "'hits[0].doc_id' is None, not a document id"),
    ({"hits": [{"doc_id": "a", "score": 2}, {"doc_id": "a", "score": 1}]},
     "document 'a' is returned twice ('hits[0].doc_id' and 'hits[1].doc_id')"),
])
def test_every_wrong_answer_names_the_query_and_the_field(doc, needle):
    with pytest.raises(ResponseError) as err:
        FieldMap.parse(None).ranking(doc, "q9")
    assert needle in str(err.value) and "q9" in str(err.value)


@pytest.mark.parametrize("spec, needle", [
    ("hits=a", "doc_id=PATH is required"),
    ("hits=a,doc_id=b,hits=c", "hits given twice"),
    ("hits=a,doc_id=b[*]", "no [*]"),
    ("hits", "is not NAME=PATH"),
])
def test_bad_field_maps_are_refused(spec, needle):
    with pytest.raises(ValueError) as err:
        FieldMap.parse(spec)
    assert needle in str(err.value)
