"""An export's provenance lists the content digests of the claims behind its rows
(``claims``: the run ids, each the sha256 of the run's canonical metrics.json, and the
document ids of the interval and comparison documents its values came from)."""

from __future__ import annotations

import hashlib
import json

from harness.core.canonical import canonical_json
from warehouse.exports import build_export


def _digest(path) -> str:
    return hashlib.sha256(canonical_json(json.loads(path.read_text())).encode()).hexdigest()


def test_the_provenance_lists_the_digests_of_the_claims_behind_the_rows(fixture_warehouse):
    dirs, ids, db = fixture_warehouse["dirs"], fixture_warehouse["ids"], fixture_warehouse["db"]
    # a run id is the sha256 of its canonical metrics.json
    assert ids["arm-one"] == _digest(dirs["arm-one"] / "metrics.json")
    three = [ids["control"], ids["arm-one"], ids["arm-two"]]
    intervals = {_digest(dirs[n] / "intervals.json") for n in ("control", "arm-one", "arm-two")}
    comparisons = _digest(dirs["control"].parent / "documents" / "comparisons.json")

    plain = build_export("publishable", runs=three, db_path=db).provenance["claims"]
    assert plain == {"metrics": sorted(three), "documents": sorted(intervals)}

    against = build_export("internal", runs=three, control=ids["control"],
                           db_path=db).provenance["claims"]
    assert against == {"metrics": sorted(three),
                       "documents": sorted(intervals | {comparisons})}

    # only the documents behind the rows exported: one run, no other run's intervals
    one = build_export("publishable", runs=[ids["arm-two"]], db_path=db).provenance["claims"]
    assert one == {"metrics": [ids["arm-two"]],
                   "documents": [_digest(dirs["arm-two"] / "intervals.json")]}
    # a run without an intervals document has no document behind its rows
    served = build_export("publishable", runs=[ids["served"]], db_path=db).provenance["claims"]
    assert served == {"metrics": [ids["served"]], "documents": []}
