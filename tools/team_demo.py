"""``make team-demo``: a team on one laptop (docs/team.md), everything on 127.0.0.1.

Starts a local S3 API (moto's server), makes a CI signing key and the ingester's trusted-keys
file, scores the toy example as four runs (two under a publishable licence and signed, one
under a non-commercial licence and signed, one under a publishable licence but unsigned: a
forgery the ingester must cap at tier B), submits them from four processes at once, runs
the ingester and serves two dashboards: one on ``publishable.duckdb`` and one on
``internal.duckdb``; then a local OIDC provider (``oidc-provider-mock``) and a third
dashboard in team mode with login, printing how to log in as an internal and as an external
user.  Ctrl-C stops every process it started.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TOY = REPO / "examples" / "toy"
BUCKET = "team-demo"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "demo", "AWS_SECRET_ACCESS_KEY": "demo",
               "AWS_DEFAULT_REGION": "us-east-1"}
#: (name, licence, signed)
RUNS = (("bm25-mit", "MIT", True), ("bm25-cc-by", "CC-BY-4.0", True),
        ("bm25-noncommercial", "CC-BY-NC-4.0", True), ("bm25-unsigned", "MIT", False))


#: the provider's two users: the group claim makes one internal
LOGIN_USERS = ({"sub": "ines", "email": "ines@example.org", "groups": ["staff", "eval-internal"]},
               {"sub": "eve", "email": "eve@example.org", "groups": ["staff"]})


def login_secrets(path: Path, snapshots: Path, base: str, provider: str,
                  anonymous: str = "none") -> Path:
    """Write a team-mode ``secrets.toml`` at ``path`` (mode 0600) for a dashboard at ``base``
    logging in against the OIDC provider at ``provider`` (group ``eval-internal`` is
    internal).  The cookie secret is new and random; the client secret is the provider
    mock's (it accepts any)."""
    text = ("[team]\n"
            f"snapshots = {json.dumps(str(snapshots))}\n"
            'group_claim = "groups"\ninternal_groups = ["eval-internal"]\n'
            f"anonymous = {json.dumps(anonymous)}\n"
            "[auth]\n"
            f"redirect_uri = {json.dumps(base + '/oauth2callback')}\n"
            f"cookie_secret = {json.dumps(secrets.token_urlsafe(32))}\n"
            'client_id = "eval-dashboard"\nclient_secret = "demo"\n'
            "server_metadata_url = "
            f"{json.dumps(provider + '/.well-known/openid-configuration')}\n")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    return path


def provider_command(port: int) -> list[str]:
    """The OIDC provider mock on 127.0.0.1:``port`` with :data:`LOGIN_USERS`."""
    command = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1",
               "--port", str(port)]
    for user in LOGIN_USERS:
        command += ["--user-claims", json.dumps(user)]
    return command


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http(url: str, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"error: nothing answered at {url} within {timeout:g} s")


def make_keys(root: Path) -> tuple[Path, Path]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    key = ed25519.Ed25519PrivateKey.generate()
    private = root / "ci-signing-key.pem"
    # created owner-only (never readable by others, not even for a moment); an existing
    # key is refused, never overwritten
    fd = os.open(private, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    trusted = root / "trusted-keys.pem"
    trusted.write_bytes(key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, trusted


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="make team-demo", description=__doc__)
    parser.add_argument("--dir", default=None, help="working folder (default: a new temp one)")
    parser.add_argument("--no-serve", action="store_true",
                        help="stop once the snapshots are published (no dashboards)")
    args = parser.parse_args(argv)
    root = Path(args.dir or tempfile.mkdtemp(prefix="team-demo-")).absolute()
    root.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **CREDENTIALS, "PYTHONPATH": str(REPO)}
    env.pop("HARNESS_SIGNING_KEY", None)
    procs: list[subprocess.Popen] = []
    try:
        port = free_port()
        procs.append(subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                                       "-p", str(port)], env=env, stdout=subprocess.DEVNULL,
                                      stderr=subprocess.DEVNULL))
        endpoint = f"http://127.0.0.1:{port}"
        env["AWS_ENDPOINT_URL_S3"] = endpoint
        wait_http(f"{endpoint}/moto-api/")
        subprocess.run([sys.executable, "-c", "import boto3; boto3.client('s3').create_bucket("
                        f"Bucket={BUCKET!r})"], env=env, check=True)
        url = f"s3://{BUCKET}/eval"
        try:
            private, trusted = make_keys(root)
        except FileExistsError as exc:
            raise SystemExit(f"error: {exc.filename}: a signing key is already there; "
                             "give --dir a new folder") from None
        print(f"store        {url} at {endpoint} (moto's S3 server)")
        print(f"signing key  {private} (the CI secret); trusted keys {trusted}")
        dirs = []
        for name, licence, signed in RUNS:
            run_env = {**env, **({"HARNESS_SIGNING_KEY": str(private)} if signed else {})}
            out = root / "results" / name
            subprocess.run([sys.executable, "-m", "harness", "score", "--qrels",
                            str(TOY / "qrels.txt"), "--run", str(TOY / "run.txt"),
                            "--query-classes", str(TOY / "classes.tsv"), "--corpus-name",
                            "toy", "--licence", licence, "--out", str(out), "--no-warehouse"],
                           env=run_env, check=True, stdout=subprocess.DEVNULL)
            dirs.append(out)
        submitters = [subprocess.Popen([sys.executable, "-m", "harness", "submit", str(d),
                                        "--to", url], env=env) for d in dirs]
        if any(p.wait(120) for p in submitters):
            raise SystemExit("error: a submission failed (see above)")
        snaps = root / "snapshots"
        done = subprocess.run([sys.executable, "-m", "warehouse", "ingest", "--watch", url,
                               "--snapshots", str(snaps), "--trusted-keys", str(trusted),
                               "--once"], env=env)
        if done.returncode:
            raise SystemExit(done.returncode)
        if args.no_serve:
            return 0
        procs.append(subprocess.Popen([sys.executable, "-m", "warehouse", "ingest", "--watch",
                                       url, "--snapshots", str(snaps), "--trusted-keys",
                                       str(trusted)], env=env, stdout=subprocess.DEVNULL))
        for audience in ("publishable", "internal"):
            web = free_port()
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"),
                 "--server.address", "127.0.0.1", "--server.port", str(web),
                 "--server.headless", "true"],
                env={**env, "HARNESS_WAREHOUSE": str(snaps / f"{audience}.duckdb")},
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            wait_http(f"http://127.0.0.1:{web}/_stcore/health")
            print(f"{audience:12s} dashboard http://127.0.0.1:{web}  (reads "
                  f"{snaps / (audience + '.duckdb')})")
        idp_port, web = free_port(), free_port()
        provider = f"http://127.0.0.1:{idp_port}"
        procs.append(subprocess.Popen(provider_command(idp_port), env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_http(f"{provider}/.well-known/openid-configuration")
        base = f"http://127.0.0.1:{web}"
        secrets_file = login_secrets(root / "secrets.toml", snaps, base, provider)
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"),
             "--server.address", "127.0.0.1", "--server.port", str(web),
             "--server.headless", "true", "--secrets.files", str(secrets_file)],
            env={k: v for k, v in env.items() if k != "HARNESS_WAREHOUSE"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_http(f"{base}/_stcore/health")
        print(f"login        dashboard {base}  (team mode: the snapshot of your audience; "
              f"OIDC provider {provider})")
        print("             Log in, then on the provider's page click 'ines' (group "
              "eval-internal: internal) or 'eve' (external: publishable only).")
        print(f"             audit log: {snaps / 'audit.jsonl'}")
        print(f"submit more: AWS_ENDPOINT_URL_S3={endpoint} AWS_ACCESS_KEY_ID=demo "
              f"AWS_SECRET_ACCESS_KEY=demo python -m harness submit DIR --to {url}")
        print("Ctrl-C stops everything.")
        while all(p.poll() is None for p in procs):
            time.sleep(1)
        return 1
    except KeyboardInterrupt:
        return 130
    finally:
        for proc in reversed(procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    sys.exit(main())
