"""``python -m harness submit DIR... --to URL``: every directory delivered once, a second
submission a no-op, bad paths exit 2 before anything is sent, an unreachable store exit 1."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness.core.store import open_store
from harness.core.submissions import complete, listing_of
from tests.warehouse.builders import simple_run


def submit(*args, env=None):
    return subprocess.run([sys.executable, "-m", "harness", "submit", *map(str, args)],
                          capture_output=True, text=True, timeout=120, env=env)


def test_submit_to_a_shared_directory_then_again_is_a_no_op(tmp_path):
    runs = [simple_run(tmp_path / f"run{i}", control_name=f"r{i}", offset=i / 100)
            for i in range(3)]
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    first = submit(*runs, "--to", f"file://{store_dir}")
    assert first.returncode == 0, first.stderr
    digests = sorted(listing_of(r)[0].digest for r in runs)
    assert complete(open_store(str(store_dir))) == digests
    assert first.stdout.count("submitted: ") == 3
    again = submit(*runs, "--to", str(store_dir))
    assert again.returncode == 0 and again.stdout.count("already in the store") == 3
    assert complete(open_store(str(store_dir))) == digests


def test_a_path_that_is_not_a_results_directory_is_refused_before_sending(tmp_path):
    run = simple_run(tmp_path / "run")
    (tmp_path / "store").mkdir()
    done = submit(run, tmp_path / "nothing", "--to", tmp_path / "store")
    assert done.returncode == 2 and "nothing" in done.stderr and "Traceback" not in done.stderr
    assert complete(open_store(str(tmp_path / "store"))) == []


@pytest.mark.service
def test_submit_through_the_s3_api(tmp_path, s3_bucket, s3_server):
    import os

    run = simple_run(tmp_path / "run")
    env = {**os.environ, **s3_server.env}
    done = submit(run, "--to", s3_bucket, env=env)
    assert done.returncode == 0, done.stderr
    assert complete(open_store(s3_bucket)) == [listing_of(run)[0].digest]


@pytest.mark.service
def test_an_unreachable_store_exits_1_naming_it(tmp_path, s3_server):
    import os

    from tests.servers.s3 import free_port

    run = simple_run(tmp_path / "run")
    env = {**os.environ, **s3_server.env}
    done = submit(run, "--to", "s3://team/x", "--endpoint-url",
                  f"http://127.0.0.1:{free_port()}", env=env)
    assert done.returncode == 1 and "s3://team/x" in done.stderr
    assert "Traceback" not in done.stderr
