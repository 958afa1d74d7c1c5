"""The ``python -m ingestion`` entry point and the no-side-effects-on-import rule."""

from __future__ import annotations

import json
import subprocess
import sys

from ingestion.cli import COMMANDS, main
from harness.core.sources import SOURCES
from harness.core.tiers import source_tier

MODULES = [
    "ingestion", "ingestion.attribution", "harness.core.sources", "ingestion.corpus", "ingestion.digest",
    "ingestion.timing", "ingestion.chunking", "ingestion.judgements", "ingestion.fetch",
    "ingestion.stats", "ingestion.composition", "ingestion.loaders", "ingestion.loaders.qmsum",
    "ingestion.loaders.beir", "ingestion.loaders.trec", "ingestion.loaders.synthetic",
    "ingestion.synthetic", "ingestion.synthetic.generator", "ingestion.synthetic.validate",
    "ingestion.synthetic.budget", "ingestion.synthetic.spec", "ingestion.synthetic.vocab",
    "ingestion.cli",
] + sorted(COMMANDS.values())


def test_importing_any_module_loads_no_heavy_dependency():
    code = ("import importlib, sys\n"
            f"for m in {MODULES!r}: importlib.import_module(m)\n"
            "print(sorted(m for m in ('bm25s', 'torch', 'duckdb', 'streamlit', 'tqdm', "
            "'sentence_transformers') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_module_entry_point_runs():
    out = subprocess.run([sys.executable, "-m", "ingestion", "sources"], capture_output=True,
                         text=True, check=True)
    lines = out.stdout.splitlines()
    assert len(lines) == len(SOURCES)
    assert any(line.startswith("qmsum ") and " A " in line for line in lines)


def test_sources_json_carries_the_derived_tier(capsys):
    assert main(["sources", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert set(rows) == set(SOURCES)
    assert all(rows[n]["tier"] == source_tier(SOURCES[n]) for n in rows)


def test_bad_spec_is_a_clear_error(capsys):
    assert main(["stats", "nonsense"]) == 2
    assert "expected KIND:PATH with KIND one of ['beir', 'qmsum', 'synthetic', 'trec']" in \
        capsys.readouterr().err


def test_a_look_alike_corpus_name_keeps_the_registered_tier_or_is_refused(tmp_path, capsys):
    from tests.ingestion.helpers import write_beir

    folder = write_beir(tmp_path / "scifact")
    (folder / "LICENSE").write_text("Creative Commons CC0-1.0\n", encoding="utf-8")
    for name in ("BEIR-SciFact", "beir\u2010scifact", "MeetingBank"):
        assert main(["stats", f"beir:{folder}", "--name", name, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["tier"] == "B", name
    assert main(["stats", f"beir:{folder}", "--name", "beir-sc\u0456fact"]) == 2
    assert "U+0456 CYRILLIC" in capsys.readouterr().err
