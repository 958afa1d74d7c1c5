"""migration.md shows model, corpus and licence-evidence names as text (issue #16)."""

from __future__ import annotations

import copy

from harness.studies.embedding_migration.document import render_markdown
from tests.markdown_check import HOSTILE, assert_inert


def test_hostile_names_in_a_migration_report_stay_text(rotation_report):
    doc = copy.deepcopy(rotation_report[0])
    doc["models"]["old"]["model_id"] = HOSTILE[0]
    doc["models"]["new"]["model_id"] = HOSTILE[1]
    doc["models"]["new"]["source"] = HOSTILE[2]
    doc["models"]["old"]["query_prefix"] = HOSTILE[4]
    doc["corpora"][0]["name"] = HOSTILE[3]
    doc["corpora"][0]["evidence"] = HOSTILE[1]
    assert_inert(render_markdown(doc), *HOSTILE[:4])
