"""A header value given as ``env:VAR`` reaches the system and never any written file: not
the results directory, not the warehouse, not the gate document or the step summary, not
an error message."""

from __future__ import annotations

import json

import pytest

from harness.cli import main

from .conftest import bench, files_under, http_args
from .server import SystemServer

SECRET = "sk-test-7f3a9c1e5b"


def _warehouse_text(db) -> str:
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        parts = []
        for (table,) in con.execute("select table_name from information_schema.tables "
                                    "where table_type = 'BASE TABLE'").fetchall():
            for row in con.execute(f'select * from "{table}"').fetchall():
                parts.append(" ".join(map(str, row)))
        return "\n".join(parts)
    finally:
        con.close()


def test_a_header_secret_is_sent_and_never_written(tmp_path, synthetic, rankings,
                                                   monkeypatch, capsys):
    monkeypatch.setenv("SYSTEM_TOKEN", SECRET)
    db = tmp_path / "warehouse.duckdb"
    out = tmp_path / "results"
    with SystemServer(rankings) as server:
        code = main(["bench", "--corpus", f"synthetic:{synthetic}", "--no-progress",
                     *http_args(server.url, "--header", "X-Api-Key: env:SYSTEM_TOKEN",
                                "--header", "X-Team: search"),
                     "--out", str(out), "--db", str(db)])
        assert code == 0
        assert {h.get("X-Api-Key") for h in server.headers_seen} == {SECRET}
        gate_doc, summary = tmp_path / "gate.json", tmp_path / "summary.md"
        assert main(["bench", "--corpus", f"synthetic:{synthetic}", "--no-progress",
                     "--no-warehouse",
                     *http_args(server.url, "--header", "X-Api-Key: env:SYSTEM_TOKEN"),
                     "--gate", "point", "--gate-threshold", "0.1", "--gate-out", str(gate_doc),
                     "--summary", str(summary)]) in (0, 1)
    printed = capsys.readouterr()
    written = files_under(out, db, gate_doc, summary)
    assert len(written) >= 8 and db in written
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in _warehouse_text(db)
    assert SECRET not in printed.out + printed.err
    sut = json.loads((out / "metrics.json").read_text())["system_under_test"]
    assert sut["headers"] == ["X-Api-Key", "X-Team"]  # the names only
    assert "search" not in json.dumps(sut["headers"])


def test_a_secret_is_not_in_an_error_message(tmp_path, synthetic, rankings, monkeypatch,
                                             capsys):
    monkeypatch.setenv("SYSTEM_TOKEN", SECRET)
    with SystemServer(rankings, fault=lambda q, a: "500") as server:
        code = main(["bench", "--corpus", f"synthetic:{synthetic}", "--no-progress",
                     "--no-warehouse",
                     *http_args(server.url, "--header", "Authorization: env:SYSTEM_TOKEN",
                                "--http-retries", "0"),
                     "--out", str(tmp_path / "out")])
    printed = capsys.readouterr()
    assert code == 5 and SECRET not in printed.out + printed.err


@pytest.mark.parametrize("value, message", [
    (None, "--header Authorization: environment variable SYSTEM_TOKEN is not set"),
    (SECRET + "\r\nX-Injected: 1",  # the break at character len(SECRET) + 1 == 19
     "--header Authorization: environment variable SYSTEM_TOKEN: the value holds a line "
     "break (CR/LF) at character 19"),
], ids=["unset", "line-break"])
def test_a_bad_variable_is_refused_before_any_request(tmp_path, synthetic, rankings,
                                                      monkeypatch, capsys, value, message):
    if value is None:
        monkeypatch.delenv("SYSTEM_TOKEN", raising=False)
    else:
        monkeypatch.setenv("SYSTEM_TOKEN", value)
    with SystemServer(rankings) as server:
        code = bench(synthetic, *http_args(server.url, "--header",
                                           "Authorization: env:SYSTEM_TOKEN"),
                     "--out", str(tmp_path / "out"))
        assert server.requests == 0
    err = capsys.readouterr().err
    assert code == 2 and message in err and SECRET not in err
    assert not (tmp_path / "out").exists()


def test_a_secret_is_not_in_the_logs_of_a_real_process(tmp_path, synthetic, rankings,
                                                       repo_root):
    import os
    import subprocess
    import sys

    url_key = "uk-test-0d9e8f7a6b"  # a key written into the URL itself
    env = {**os.environ, "PYTHONPATH": str(repo_root), "SYSTEM_TOKEN": SECRET}
    with SystemServer(rankings) as server:
        template = server.url + "/search?qid={query_id}&q={query}&k={k}&key=" + url_key
        done = subprocess.run(
            [sys.executable, "-m", "harness", "bench", "--corpus", f"synthetic:{synthetic}",
             "--backend", "http", "--url-template", template,
             "--header", "Authorization: env:SYSTEM_TOKEN",
             "--out", str(tmp_path / "out"), "--db", str(tmp_path / "w.duckdb")],
            cwd=repo_root, env=env, capture_output=True, text=True, timeout=120)
        assert {h.get("Authorization") for h in server.headers_seen} == {SECRET}
    assert done.returncode == 0, done.stderr
    assert SECRET not in done.stdout + done.stderr
    assert "HTTP Request" not in done.stderr  # no per-request log lines
    written = files_under(tmp_path)  # the results, the warehouse and its lock file
    assert any(p.name.endswith(".lock") for p in written), written
    for path in written:
        assert url_key.encode() not in path.read_bytes(), path


def test_a_secret_the_server_echoes_is_redacted(tmp_path, synthetic, monkeypatch, capsys):
    from tests.harness.retrieval.hostile import HostileServer, whole

    monkeypatch.setenv("SYSTEM_TOKEN", SECRET)
    echo = f'{{"error": "invalid key {SECRET}"}}'.encode()
    with HostileServer(whole(echo, status="401 Unauthorized")) as server:
        code = bench(synthetic, *http_args(server.url, "--header",
                                           "Authorization: env:SYSTEM_TOKEN"),
                     "--out", str(tmp_path / "out"))
        assert SECRET.encode() in server.requests[0]  # it was sent
    err = capsys.readouterr().err
    assert code == 5 and "HTTP 401 from the system" in err
    assert SECRET not in err and "invalid key ***" in err


def test_a_url_parameter_from_the_environment_is_sent_and_never_written(
        tmp_path, synthetic, rankings, monkeypatch, capsys):
    monkeypatch.setenv("SYSTEM_TOKEN", SECRET)
    out, db = tmp_path / "results", tmp_path / "warehouse.duckdb"
    with SystemServer(rankings) as server:
        template = server.url + "/search?qid={query_id}&q={query}&k={k}&api_key={env:SYSTEM_TOKEN}"
        assert main(["bench", "--corpus", f"synthetic:{synthetic}", "--no-progress",
                     "--backend", "http", "--url-template", template,
                     "--out", str(out), "--db", str(db)]) == 0
        sent = list(server.paths_seen)
    assert len(sent) == len(rankings)
    assert all(path.endswith(f"&api_key={SECRET}") for path in sent)
    sut = json.loads((out / "metrics.json").read_text())["system_under_test"]
    assert sut["url_template"].endswith("&api_key={env:SYSTEM_TOKEN}")
    for path in files_under(out, db):
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in _warehouse_text(db) + capsys.readouterr().err


def test_a_key_written_into_the_url_is_redacted_in_everything_recorded(
        tmp_path, synthetic, rankings, capsys):
    out, db = tmp_path / "results", tmp_path / "warehouse.duckdb"
    with SystemServer(rankings) as server:
        template = (server.url + "/search?qid={query_id}&q={query}&k={k}&api_key=" + SECRET
                    + "&Signature=abc123def456")
        assert main(["bench", "--corpus", f"synthetic:{synthetic}", "--no-progress",
                     "--backend", "http", "--url-template", template,
                     "--out", str(out), "--db", str(db)]) == 0
    sut = json.loads((out / "metrics.json").read_text())["system_under_test"]
    assert sut["url_template"] == (server.url + "/search?qid={query_id}&q={query}&k={k}"
                                   "&api_key=***&Signature=***")
    for path in files_under(out, db):
        data = path.read_bytes()
        assert SECRET.encode() not in data and b"abc123def456" not in data, path
    assert SECRET not in _warehouse_text(db)


def test_a_key_written_into_the_body_template_is_redacted_in_everything_recorded(
        tmp_path, synthetic, rankings):
    out, db = tmp_path / "results", tmp_path / "warehouse.duckdb"
    body = ('{"query_id": "{query_id}", "q": "{query}", "size": {k}, '
            '"api_key": "' + SECRET + '", "index": "meetings"}')
    with SystemServer(rankings) as server:
        assert main(["bench", "--corpus", f"synthetic:{synthetic}", "--no-progress",
                     "--backend", "http", "--url-template", server.url + "/search",
                     "--method", "POST", "--body-template", body,
                     "--out", str(out), "--db", str(db)]) == 0
    sut = json.loads((out / "metrics.json").read_text())["system_under_test"]
    # the key's value hidden, every other field as written
    assert sut["body_template"] == ('{"query_id": "{query_id}", "q": "{query}", "size": {k}, '
                                    '"api_key": "***", "index": "meetings"}')
    for path in files_under(out, db):
        assert SECRET.encode() not in path.read_bytes(), path
    assert SECRET not in _warehouse_text(db)


def test_a_literal_header_value_the_server_echoes_is_redacted(tmp_path, synthetic, capsys):
    from tests.harness.retrieval.hostile import HostileServer, whole

    echo = f'{{"error": "invalid key {SECRET}"}}'.encode()
    with HostileServer(whole(echo, status="401 Unauthorized")) as server:
        code = bench(synthetic, *http_args(server.url, "--header", f"Authorization: {SECRET}"),
                     "--out", str(tmp_path / "out"))
        assert SECRET.encode() in server.requests[0]  # it was sent
    err = capsys.readouterr().err
    assert code == 5 and "HTTP 401 from the system" in err
    assert SECRET not in err and "invalid key ***" in err
