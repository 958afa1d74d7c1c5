"""One convention for every list of measures (issue 37, item 9): ``--measures nDCG@10,P@10``
and ``--measures nDCG@10 P@10`` are the same list in ``harness score``, ``compare``,
``bench``, ``intervals`` and ``warehouse export`` (``harness.core.arglists``), and give the
same result."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.arglists import CommaList, split_items
from harness.core.measures import FILE_PREFIX, MEASURES
from warehouse.cli import main as warehouse_main

REPO = Path(__file__).resolve().parents[3]
TOY = REPO / "examples" / "toy"
COMMA = ["--measures", "nDCG@10,P@10"]
SPACE = ["--measures", "nDCG@10", "P@10"]


def test_no_measure_name_holds_a_comma():
    names = [*MEASURES, *(FILE_PREFIX + m for m in MEASURES)]
    assert names and not [n for n in names if "," in n or n != n.strip()]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="x")
    p.add_argument("--measures", nargs="+", action=CommaList, default=["MRR"])
    p.add_argument("positional", nargs="?")
    return p


@pytest.mark.parametrize("argv", [COMMA, SPACE, ["--measures", " nDCG@10 , P@10 "],
                                  ["--measures", "nDCG@10", "--measures", "P@10"]])
def test_both_forms_and_repeats_give_one_list(argv):
    assert _parser().parse_args(argv).measures == ["nDCG@10", "P@10"]


def test_the_default_is_replaced_never_extended():
    p = _parser()
    assert p.parse_args([]).measures == ["MRR"]
    assert p.parse_args(["--measures", "AP"]).measures == ["AP"]
    assert p.parse_args(["--measures", "AP"]).measures == ["AP"]  # the default is untouched
    assert p.get_default("measures") == ["MRR"]


@pytest.mark.parametrize("value", ["nDCG@10,,P@10", "nDCG@10,", ",", " "])
def test_an_empty_name_is_a_usage_error(value, capsys):
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(["--measures", value])
    assert exc.value.code == 2
    assert "argument --measures: " in capsys.readouterr().err
    with pytest.raises(ValueError, match="empty name"):
        split_items([value])


# --------------------------------------------------------------------------- every command


def _score(out: Path, measures: list[str]) -> Path:
    assert main(["score", "--qrels", str(TOY / "qrels.txt"), "--run", str(TOY / "run.txt"),
                 "--query-classes", str(TOY / "classes.tsv"), "--corpus-name", "toy",
                 "--licence", "CC0-1.0", "--control-name", "toy", "--out", str(out),
                 *measures, "--no-warehouse"]) == 0
    return out


def _claim(out: Path) -> dict:
    return {name: (out / name).read_bytes() for name in ("metrics.json", "per_query.jsonl")}


def test_score_takes_both_forms(tmp_path):
    comma, space = _score(tmp_path / "a" / "run", COMMA), _score(tmp_path / "b" / "run", SPACE)
    assert _claim(comma) == _claim(space)
    rows = json.loads((comma / "metrics.json").read_text())["rows"]
    assert sorted(rows[0]["metrics"]) == ["Judged@10", "P@10", "nDCG@10"]


def test_compare_takes_both_forms(tmp_path, capsys):
    run = _score(tmp_path / "run", [])
    tables = []
    for form in (COMMA, SPACE):
        capsys.readouterr()
        assert main(["compare", str(run), str(run), *form]) == 0
        tables.append(capsys.readouterr().out)
    assert tables[0] == tables[1] and "P@10" in tables[0] and "MRR" not in tables[0]


def test_intervals_take_both_forms(tmp_path, capsys):
    docs = []
    for name, form in (("a", COMMA), ("b", SPACE)):
        run = _score(tmp_path / name / "run", [])
        assert main(["intervals", str(run), "--resamples", "200", *form]) == 0
        docs.append(json.loads((run / "intervals.json").read_text())["rows"])
    assert docs[0] == docs[1]
    assert {r["measure"] for r in docs[0]} == {"nDCG@10", "P@10"}


def test_bench_takes_both_forms(tmp_path, synthetic_corpus):
    claims = []
    for name, form in (("a", COMMA), ("b", SPACE)):
        out = tmp_path / name / "arm"
        assert main(["bench", "--corpus", f"synthetic:{synthetic_corpus}", "--mode", "bm25",
                     "--control-name", "arm", "--cache-dir", str(tmp_path / "cache"),
                     "--out", str(out), *form, "--no-warehouse"]) == 0
        claims.append(json.loads((out / "metrics.json").read_text()))
    assert claims[0]["rows"] == claims[1]["rows"]
    assert {"nDCG@10", "P@10"} <= set(claims[0]["rows"][0]["metrics"])
    assert "MRR" not in claims[0]["rows"][0]["metrics"]


def test_warehouse_export_takes_both_forms(tmp_path, capsys):
    import warehouse

    db = tmp_path / "w.duckdb"
    warehouse.ingest_results(_score(tmp_path / "run", []), db_path=db)
    tables = []
    for name, form in (("comma", COMMA), ("space", SPACE),
                       ("mixed", ["--measure", "nDCG@10", "--measures", "P@10"])):
        out = tmp_path / f"{name}.md"
        assert warehouse_main(["export", "--view", "publishable", "--format", "md",
                               "--out", str(out), *form, "--db", str(db)]) == 0
        tables.append(out.read_text())
    assert tables[0] == tables[1] == tables[2]
    assert "P@10" in tables[0] and "MRR" not in tables[0]
    with pytest.raises(SystemExit) as exc:
        warehouse_main(["export", "--view", "publishable", "--format", "md", "--out",
                        str(tmp_path / "x.md"), "--measures", "nDCG@10,,P@10", "--db", str(db)])
    assert exc.value.code == 2 and "empty name" in capsys.readouterr().err


def test_every_measures_option_uses_the_one_convention():
    """Every ``--measures`` of every command parses with :class:`CommaList`."""
    from harness.cli import COMMANDS, _available, build_parser

    found = []

    def walk(parser, path):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")
            elif "--measures" in action.option_strings:
                found.append((path, type(action)))

    walk(build_parser(_available()), "harness")
    import warehouse.cli as wcli

    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    for name, (_, add, _) in wcli.COMMANDS.items():
        add(sub.add_parser(name))
    walk(parser, "warehouse")
    assert {p for p, _ in found} >= {"harness score", "harness compare", "harness bench",
                                     "harness intervals", "warehouse export"}
    assert all(kind is CommaList for _, kind in found), found
    assert set(COMMANDS) >= {"score", "compare", "bench", "intervals"}
