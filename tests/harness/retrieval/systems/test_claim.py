"""``system_under_test`` in metrics.json: checked when read (kind, header names only) and
carried into the warehouse's copy of the claim."""

from __future__ import annotations

import json

import pytest

from harness.claims.base import ClaimError
from harness.claims.metrics import MetricsClaim

from .conftest import bench, http_args
from .server import SystemServer


@pytest.fixture(scope="module")
def http_claim(tmp_path_factory, synthetic, rankings):
    out = tmp_path_factory.mktemp("claim") / "http"
    with SystemServer(rankings) as server:
        assert bench(synthetic, *http_args(server.url, "--header", "X-Team: search"),
                     "--out", str(out)) == 0
    return json.loads((out / "metrics.json").read_text())


def test_a_written_claim_validates_and_keeps_the_block(http_claim):
    MetricsClaim.validate(http_claim)
    assert http_claim["system_under_test"]["headers"] == ["X-Team"]
    assert "system_under_test" not in http_claim["index"]["backend"]


@pytest.mark.parametrize("change, field", [
    ({"headers": ["X-Team: search"]}, "system_under_test.headers"),
    ({"headers": "X-Team"}, "system_under_test.headers"),
    ({"kind": "ftp"}, "system_under_test.kind"),
])
def test_a_bad_block_is_refused_naming_the_field(http_claim, change, field):
    doc = json.loads(json.dumps(http_claim))
    doc["system_under_test"].update(change)
    with pytest.raises(ClaimError) as err:
        MetricsClaim.validate(doc, "x/metrics.json")
    assert field in str(err.value)
