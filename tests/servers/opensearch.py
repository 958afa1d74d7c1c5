"""A throwaway single-node OpenSearch 2.19 for tests and benchmarks (standard library only).

The node is the one assembled by ``tools/opensearch-node/build.sh`` from Maven Central: the
server with the netty4 HTTP transport, analysis-common, painless, k-NN (Lucene engine only: the
jars carry no native faiss/nmslib libraries, so every ``knn_vector`` mapping must say
``"engine": "lucene"``) and neural-search (``hybrid`` query, normalization and score-ranker
processors).  It listens on 127.0.0.1, on the first free port of 9200-9300 unless told
otherwise, with its data and logs in a folder of its own.

    from tests.servers import opensearch
    ok, why = opensearch.available()          # (False, reason) e.g. for pytest.skip(why)
    node = opensearch.start_node()             # waits for yellow health
    node.url                                   # 'http://127.0.0.1:9200'
    node.stop()                                # close stdin -> SIGTERM -> wait -> SIGKILL

The node also stops by itself when its standard input closes, so a parent that dies (even by
SIGKILL) leaves no node behind.  ``python -m tests.servers.opensearch`` runs one in the
foreground until Ctrl-C.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TOOL = REPO / "tools" / "opensearch-node"
TARGET = TOOL / "target"
BUILD_COMMAND = "tools/opensearch-node/build.sh"
MAIN_CLASS = "org.retrieval.opensearchnode.NodeLauncher"
VERSION = "2.19.1"
DEFAULT_HEAP = ("-Xms512m", "-Xmx1g")
MIN_JAVA = 17

#: first start to yellow must fit in this (measured: 6-22 s on 2 cores)
START_TIMEOUT = 60.0
#: set to 1 (``.ci/run`` does) to make the OpenSearch tests fail instead of skipping
REQUIRE_ENV = "REQUIRE_OPENSEARCH"

_java_checked: dict[str, tuple[bool, str]] = {}


def required() -> bool:
    """True when the environment says the OpenSearch tests are mandatory here."""
    return os.environ.get(REQUIRE_ENV, "") == "1"


def unavailable(why: str):
    """``pytest.skip(why)``, or ``pytest.fail`` when :func:`required`."""
    import pytest

    if required():
        pytest.fail(f"{REQUIRE_ENV}=1 but no OpenSearch node can start here: {why}")
    pytest.skip(why)


def find_java() -> str | None:
    """``$JAVA_HOME/bin/java`` when set, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and os.access(os.path.join(home, "bin", "java"), os.X_OK):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def _java_ok(java: str) -> tuple[bool, str]:
    if java not in _java_checked:
        try:
            out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
            text = out.stderr + out.stdout
        except (OSError, subprocess.SubprocessError) as exc:
            _java_checked[java] = (False, f"{java} -version failed: {exc}")
            return _java_checked[java]
        m = re.search(r'version "(\d+)(?:\.(\d+))?', text)
        major = int(m.group(1)) if m else 0
        if major == 1 and m and m.group(2):  # "1.8.0_..."
            major = int(m.group(2))
        if major < MIN_JAVA:
            _java_checked[java] = (False, f"{java} is Java {major or '?'}; OpenSearch {VERSION} "
                                          f"needs Java {MIN_JAVA}+ (set JAVA_HOME)")
        else:
            _java_checked[java] = (True, "")
    return _java_checked[java]


def classpath(target: Path = TARGET) -> str:
    return os.pathsep.join([str(target / "opensearch-node.jar"), str(target / "lib" / "*"),
                            str(target / "plugins" / "opensearch-knn" / "*"),
                            str(target / "plugins" / "neural-search" / "*")])


def cds_args(java: str, target: Path = TARGET) -> list[str]:
    """``-XX:SharedArchiveFile=target/node.jsa`` when build.sh made that class-data-sharing
    archive with this same java (it halves the start time); else nothing.  The JVM checks the
    archive itself too and ignores one that does not match (a warning in node.out)."""
    archive, made_by = target / "node.jsa", target / "node.jsa.java"
    if os.environ.get("OPENSEARCH_NODE_CDS", "1") == "0" or not archive.is_file() or not made_by.is_file():
        return []
    resolved = shutil.which(java) or java
    if made_by.read_text().strip() != os.path.realpath(resolved):
        return []
    return [f"-XX:SharedArchiveFile={archive}"]


def available() -> tuple[bool, str]:
    """(True, "") when a node can be started here, else (False, why and what to run)."""
    java = find_java()
    if java is None:
        return False, (f"no java found (JAVA_HOME or PATH); OpenSearch {VERSION} needs Java "
                       f"{MIN_JAVA}+: apt-get install openjdk-17-jdk-headless")
    ok, why = _java_ok(java)
    if not ok:
        return False, why
    if not (TARGET / "opensearch-node.jar").is_file() or not any((TARGET / "lib").glob("opensearch-*.jar")):
        return False, (f"the OpenSearch node is not built ({TARGET} is missing or incomplete); "
                       f"run `{BUILD_COMMAND}` (or `make opensearch`), which needs Maven")
    return True, ""


def build(quiet: bool = True) -> None:
    """Run the build script (a no-op when already built); raises CalledProcessError on failure."""
    subprocess.run([str(TOOL / "build.sh")], check=True,
                   stdout=subprocess.DEVNULL if quiet else None)


class NodeStartError(RuntimeError):
    pass


class OpenSearchNode:
    """One node process.  ``home`` holds data/, logs/ and the launcher's output (node.out)."""

    def __init__(self, workdir: str | os.PathLike | None = None, *, http_port: int | str | None = None,
                 settings: dict[str, object] | None = None, heap: tuple[str, ...] = DEFAULT_HEAP,
                 jvm_args: tuple[str, ...] = (), java: str | None = None):
        self._own_home = workdir is None
        self.home = (Path(workdir) if workdir is not None
                     else Path(tempfile.mkdtemp(prefix="opensearch-node-")))
        self.java = java or find_java() or "java"
        self.settings = dict(settings or {})
        if http_port is not None:
            self.settings["http.port"] = str(http_port)
        self.jvm_args = tuple(heap) + tuple(jvm_args)
        self.proc: subprocess.Popen | None = None
        self.url: str | None = None
        self.port: int | None = None
        self.startup_seconds: float | None = None

    # paths
    @property
    def ports_file(self) -> Path:
        return self.home / "logs" / "http.ports"

    @property
    def log_file(self) -> Path:
        return self.home / "logs" / "opensearch.log"

    @property
    def out_file(self) -> Path:
        return self.home / "node.out"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def command(self) -> list[str]:
        args = [f"-E{k}={'true' if v is True else 'false' if v is False else v}"
                for k, v in self.settings.items()]
        return [self.java, *cds_args(self.java), *self.jvm_args, "-cp", classpath(), MAIN_CLASS,
                str(self.home), *args]

    def start(self, timeout: float = 60) -> "OpenSearchNode":
        """Start the process and wait (at most ``timeout`` s) until HTTP answers yellow health."""
        if self.proc is not None and self.proc.poll() is None:
            raise NodeStartError("node already running")
        ok, why = available()
        if not ok:
            raise NodeStartError(why)
        t0 = time.monotonic()
        deadline = t0 + timeout
        (self.home / "logs").mkdir(parents=True, exist_ok=True)
        self.ports_file.unlink(missing_ok=True)
        with open(self.out_file, "ab") as out:
            self.proc = subprocess.Popen(self.command(), stdin=subprocess.PIPE, stdout=out,
                                         stderr=subprocess.STDOUT, cwd=self.home)
        try:
            address = self._wait_for_ports(deadline)
            self.url = f"http://{address}"
            self.port = int(address.rsplit(":", 1)[1])
            self._wait_for_yellow(deadline)
        except BaseException:
            self._kill_process()
            raise
        self.startup_seconds = time.monotonic() - t0
        return self

    def _failure(self, what: str) -> NodeStartError:
        tail = []
        for f in (self.out_file, self.log_file):
            if f.exists():
                tail.append(f"--- {f} (tail)\n" + f.read_text(errors="replace")[-3000:])
        return NodeStartError(what + "\n" + "\n".join(tail))

    def _wait_for_ports(self, deadline: float) -> str:
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise self._failure(f"node exited with code {self.proc.returncode} before binding HTTP")
            if self.ports_file.exists():
                lines = self.ports_file.read_text().split()
                if lines:
                    ipv4 = [a for a in lines if not a.startswith("[")]
                    return (ipv4 or lines)[0]
            time.sleep(0.1)
        raise self._failure(f"no {self.ports_file} within the start timeout")

    def _wait_for_yellow(self, deadline: float) -> None:
        last = None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._failure(f"cluster health not yellow within the start timeout (last: {last})")
            if self.proc.poll() is not None:
                raise self._failure(f"node exited with code {self.proc.returncode} while starting")
            wait = max(1, min(int(left), 30))
            try:
                status, body = self.request("GET", f"/_cluster/health?wait_for_status=yellow&timeout={wait}s",
                                            timeout=wait + 5)
                last = body.get("status") if isinstance(body, dict) else body
                if status == 200 and last in ("yellow", "green"):
                    return
            except (OSError, ValueError) as exc:  # refused while starting, reset, bad JSON
                last = repr(exc)
                time.sleep(0.2)

    # a tiny client, for health checks and fixtures that need no opensearch-py
    def request(self, method: str, path: str, body: object = None, timeout: float = 30) -> tuple[int, object]:
        """(HTTP status, decoded JSON or text).  HTTP errors are returned, not raised."""
        if self.url is None:
            raise NodeStartError("node not started")
        data = None
        headers = {}
        if body is not None:
            data = body.encode() if isinstance(body, str) else json.dumps(body).encode()
            headers["Content-Type"] = "application/x-ndjson" if isinstance(body, str) else "application/json"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                status, raw = resp.status, resp.read()
        except urllib.error.HTTPError as err:
            status, raw = err.code, err.read()
        text = raw.decode("utf-8", errors="replace")
        try:
            return status, json.loads(text) if text else None
        except ValueError:
            return status, text

    def is_running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, timeout: float = 30) -> int | None:
        """Graceful stop: close stdin (the node then closes itself and exits 0), wait; SIGTERM
        (same close, exit 143), wait; then SIGKILL.  Removes the home folder when it was a
        temporary one.  Returns the exit code."""
        code = None
        try:
            if self.proc is not None:
                self._close_stdin()
                for step in (None, self.proc.terminate):
                    if step is not None and self.proc.poll() is None:
                        step()
                    try:
                        code = self.proc.wait(timeout / 2)
                        break
                    except subprocess.TimeoutExpired:
                        pass
                else:
                    code = self._kill_process()
        finally:
            if self._own_home:
                shutil.rmtree(self.home, ignore_errors=True)
        return code

    def kill(self) -> int | None:
        """SIGKILL, for fault tests: no clean close; the home folder (data) stays until stop()."""
        return self._kill_process()

    def _close_stdin(self) -> None:
        try:
            if self.proc and self.proc.stdin and not self.proc.stdin.closed:
                self.proc.stdin.close()
        except OSError:
            pass

    def _kill_process(self) -> int | None:
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        code = self.proc.wait()
        self._close_stdin()
        return code

    def __enter__(self) -> "OpenSearchNode":
        if not self.is_running():
            self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"OpenSearchNode(url={self.url!r}, pid={self.pid}, home={str(self.home)!r})"


def start_node(workdir: str | os.PathLike | None = None, timeout: float = 60, **kwargs) -> OpenSearchNode:
    """Start a node (see ``OpenSearchNode``) and wait for yellow health; raises NodeStartError."""
    return OpenSearchNode(workdir, **kwargs).start(timeout=timeout)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=f"Run one OpenSearch {VERSION} node until Ctrl-C.")
    parser.add_argument("--home", help="node folder (kept); default: a temp folder, removed at exit")
    parser.add_argument("--port", help="http.port (a port or a range), default 9200-9300")
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--build", action="store_true", help=f"run {BUILD_COMMAND} first")
    args = parser.parse_args(argv)
    if args.build:
        build(quiet=False)
    ok, why = available()
    if not ok:
        print(why, file=sys.stderr)
        return 1
    node = start_node(args.home, timeout=args.timeout, http_port=args.port)
    print(f"OpenSearch {VERSION} at {node.url}  (up in {node.startup_seconds:.1f} s; "
          f"log {node.log_file}; Ctrl-C stops it)", flush=True)
    try:
        while node.is_running():
            time.sleep(0.5)
        print(f"node exited with code {node.proc.returncode}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 0
    finally:
        node.stop()


if __name__ == "__main__":
    sys.exit(main())
