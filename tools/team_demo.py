"""``make team-demo``: a team on one laptop (docs/team.md), everything on 127.0.0.1.

Starts a local S3 API (moto's server), makes a CI signing key and the ingester's trusted-keys
file, scores the toy example as four runs (two under a publishable licence and signed, one
under a non-commercial licence and signed, one under a publishable licence but unsigned: a
forgery the ingester must cap at tier B), submits them from four processes at once, runs
the ingester and serves two dashboards: one on ``publishable.duckdb`` and one on
``internal.duckdb``; then a local OIDC provider (``oidc-provider-mock``) and a third
dashboard in team mode with login, printing how to log in as an internal and as an external
user.  Ctrl-C stops every process it started.

Ports are free ones chosen afresh unless given (``--s3-port``, ``--oidc-port``, ``--port``
for the login dashboard, ``--publishable-port``, ``--internal-port``; through make:
``make team-demo TEAM_DEMO_ARGS="--port 8600 --s3-port 9000 --oidc-port 9400"``): a port
given that is taken on 127.0.0.1 is refused, exit 2, before anything starts.  The
servers' own output (moto, the OIDC provider, the dashboards, the watching ingester) goes
to one log file each under ``DIR/logs/``; the terminal keeps the demo's own lines.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shlex
import signal
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
                  anonymous: str = "none", store: str | None = None) -> Path:
    """Write a team-mode ``secrets.toml`` at ``path`` (mode 0600) for a dashboard at ``base``
    logging in against the OIDC provider at ``provider`` (group ``eval-internal`` is
    internal; ``store``: where the Judge page submits labels).  The cookie secret is new
    and random; the client secret is the provider mock's (it accepts any)."""
    text = ("[team]\n"
            f"snapshots = {json.dumps(str(snapshots))}\n"
            'group_claim = "groups"\ninternal_groups = ["eval-internal"]\n'
            f"anonymous = {json.dumps(anonymous)}\n"
            + (f"store = {json.dumps(store)}\n" if store else "")
            + "[auth]\n"
            f"redirect_uri = {json.dumps(base + '/oauth2callback')}\n"
            f"cookie_secret = {json.dumps(secrets.token_urlsafe(32))}\n"
            'client_id = "eval-dashboard"\nclient_secret = "demo"\n'
            # the access token lets the dashboard re-read the groups (dashboard.idp)
            'expose_tokens = ["access"]\n'
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


def port_taken(port: int) -> bool:
    """Whether something holds ``port`` on 127.0.0.1 (a listener, or a bind)."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return True
    return False


def port_number(text: str) -> int:
    """An argparse type: a TCP port, 1 to 65535."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (1 to 65535)")
    return port


#: option -> what listens on it
PORT_OPTIONS = {"s3_port": "--s3-port", "oidc_port": "--oidc-port", "port": "--port",
                "publishable_port": "--publishable-port", "internal_port": "--internal-port"}


def check_ports(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Refuse (exit 2, before anything starts) a port given twice or taken on 127.0.0.1."""
    given: dict[int, str] = {}
    for dest, flag in PORT_OPTIONS.items():
        port = getattr(args, dest)
        if port is None:
            continue
        if port in given:
            parser.error(f"{flag} {port}: also given as {given[port]}; each server needs "
                         "a port of its own")
        given[port] = flag
        if port_taken(port):
            parser.error(f"{flag} {port}: 127.0.0.1:{port} is taken (another process "
                         "listens there); choose another port, or leave the option out for "
                         "a free one")


def wait_http(url: str, timeout: float = 90, proc: subprocess.Popen | None = None,
              log: Path | None = None) -> None:
    """Until ``url`` answers; an error when ``proc`` (the server) exits first or nothing
    answers within ``timeout`` seconds, naming its ``log``."""
    where = f" (its output: {log})" if log else ""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise SystemExit(f"error: the server for {url} exited with {proc.returncode} "
                             f"before answering{where}")
        try:
            urllib.request.urlopen(url, timeout=2).close()
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"error: nothing answered at {url} within {timeout:g} s{where}")


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
    parser = argparse.ArgumentParser(prog="make team-demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", default=None, help="working folder (default: a new temp one)")
    parser.add_argument("--no-serve", action="store_true",
                        help="stop once the snapshots are published (no dashboards)")
    ports = parser.add_argument_group("ports on 127.0.0.1 (default: a free one each)")
    ports.add_argument("--s3-port", type=port_number, default=None, metavar="N",
                       help="the S3 API (moto's server)")
    ports.add_argument("--oidc-port", type=port_number, default=None, metavar="N",
                       help="the OIDC provider")
    ports.add_argument("--port", type=port_number, default=None, metavar="N",
                       help="the team-mode dashboard with login")
    ports.add_argument("--publishable-port", type=port_number, default=None, metavar="N",
                       help="the dashboard on publishable.duckdb")
    ports.add_argument("--internal-port", type=port_number, default=None, metavar="N",
                       help="the dashboard on internal.duckdb")
    args = parser.parse_args(argv)
    check_ports(parser, args)
    root = Path(args.dir or tempfile.mkdtemp(prefix="team-demo-")).absolute()
    root.mkdir(parents=True, exist_ok=True)
    logs = root / "logs"
    logs.mkdir(exist_ok=True)
    env = {**os.environ, **CREDENTIALS, "PYTHONPATH": str(REPO)}
    env.pop("HARNESS_SIGNING_KEY", None)
    procs: list[tuple[subprocess.Popen, str, Path]] = []

    def stop(signum, frame):  # SIGTERM stops every server too, as Ctrl-C does
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)

    def start(name: str, command: list[str], process_env: dict) -> tuple[subprocess.Popen, Path]:
        """A server in the background, its output (stdout and stderr) in logs/NAME.log."""
        log = logs / f"{name}.log"
        with open(log, "ab") as handle:
            proc = subprocess.Popen(command, env=process_env, stdin=subprocess.DEVNULL,
                                    stdout=handle, stderr=subprocess.STDOUT)
        procs.append((proc, name, log))
        return proc, log

    try:
        port = args.s3_port or free_port()
        moto, log = start("s3", [sys.executable, "-m", "moto.server", "-H", "127.0.0.1",
                                 "-p", str(port)], env)
        endpoint = f"http://127.0.0.1:{port}"
        env["AWS_ENDPOINT_URL_S3"] = endpoint
        wait_http(f"{endpoint}/moto-api/", proc=moto, log=log)
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
        _, ingester_log = start("ingester", [
            sys.executable, "-m", "warehouse", "ingest", "--watch", url, "--snapshots",
            str(snaps), "--trusted-keys", str(trusted)], env)
        for audience in ("publishable", "internal"):
            web = getattr(args, f"{audience}_port") or free_port()
            proc, log = start(f"dashboard-{audience}", [
                sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"),
                "--server.address", "127.0.0.1", "--server.port", str(web),
                "--server.headless", "true", "--browser.gatherUsageStats", "false"],
                {**env, "HARNESS_WAREHOUSE": str(snaps / f"{audience}.duckdb")})
            wait_http(f"http://127.0.0.1:{web}/_stcore/health", proc=proc, log=log)
            print(f"{audience:12s} dashboard http://127.0.0.1:{web}  (reads "
                  f"{snaps / (audience + '.duckdb')})")
        idp_port = args.oidc_port or free_port()
        provider = f"http://127.0.0.1:{idp_port}"
        proc, log = start("oidc-provider", provider_command(idp_port), env)
        wait_http(f"{provider}/.well-known/openid-configuration", proc=proc, log=log)
        web = args.port or free_port()
        base = f"http://127.0.0.1:{web}"
        secrets_file = login_secrets(root / "secrets.toml", snaps, base, provider, store=url)
        proc, log = start("dashboard-login", [
            sys.executable, "-m", "streamlit", "run", str(REPO / "app.py"),
            "--server.address", "127.0.0.1", "--server.port", str(web),
            "--server.headless", "true", "--browser.gatherUsageStats", "false",
            "--secrets.files", str(secrets_file)],
            {k: v for k, v in env.items() if k != "HARNESS_WAREHOUSE"})
        wait_http(f"{base}/_stcore/health", proc=proc, log=log)
        print(f"login        dashboard {base}  (team mode: the snapshot of your audience; "
              f"OIDC provider {provider})")
        print("             Log in, then on the provider's page click 'ines' (group "
              "eval-internal: internal) or 'eve' (external: publishable only).")
        print(f"             audit log: {snaps / 'audit.jsonl'}")
        print(f"submit more: {submit_command(endpoint, url)}")
        print(f"logs         {logs} (the ingester's: {ingester_log.name})")
        print("Ctrl-C stops everything.", flush=True)
        while True:
            for proc, name, log in procs:
                if proc.poll() is not None:
                    print(f"error: {name} exited with {proc.returncode}; its output: {log}",
                          file=sys.stderr)
                    return 1
            time.sleep(1)
    except KeyboardInterrupt:
        return 130
    finally:
        for proc, _, _ in reversed(procs):
            if proc.poll() is None:
                proc.terminate()
        for proc, _, _ in procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()


def submit_command(endpoint: str, url: str) -> str:
    """How to submit another results directory (DIR) to the demo's store, as printed: the
    running interpreter by its full path, the store's endpoint and credentials."""
    variables = [f"AWS_ENDPOINT_URL_S3={endpoint}", *(f"{k}={v}" for k, v in CREDENTIALS.items())]
    return " ".join([*variables, shlex.quote(sys.executable), "-m", "harness", "submit",
                     "DIR", "--to", url])


if __name__ == "__main__":
    sys.exit(main())
