"""``--backend command``: a retrieval system run as a local program.

``--command 'python my_retriever.py --index x'`` (split like a shell would, run without one).

* ``--command-mode persistent`` (default): the program stays up; the harness writes one JSON
  line per query on its stdin, ``{"query_id": ..., "query": ..., "k": ...}``, and reads one
  JSON line back.  ``--http-concurrency N`` programs run side by side.  A program that dies
  or does not answer within ``--http-timeout`` is killed and restarted (at most
  ``--command-restarts`` times in a run), and the query is retried; then the run fails.
* ``--command-mode per-query``: one process per query, the same JSON line on stdin, its
  whole stdout read as one JSON document.

The answer is read with the same field map as ``--backend http``; an answer naming another
``query_id`` is refused.  An answer (a line, or a per-query program's whole stdout) longer
than ``--max-response-bytes`` fails the run; nothing longer is ever held.  What the program
prints on stderr is passed through, never kept.  Each program runs in a process group of its
own, killed whole when the program is stopped, restarted or times out, so a child it started
(``sleep 600 &``) cannot outlive it holding a pipe.
"""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import subprocess
import threading
import time

from harness.retrieval.backends.fieldmap import ResponseError, decode_json
from harness.retrieval.backends.retry import SystemFailure, Transient
from harness.retrieval.backends.system import SystemBackend

COMMAND_MODES = ("persistent", "per-query")
DEFAULT_RESTARTS = 3
#: how long the programs, their stdin closed, are given together to exit before each
#: process group is killed
STOP_GRACE_SECONDS = 2.0


def split_command(command: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ValueError(f"--command: cannot split {command!r}: {exc}") from None
    if not argv:
        raise ValueError("--command: empty")
    return argv


def _decode(data: bytes, query_id: str):
    doc = decode_json(data, query_id, "the command's answer")
    if isinstance(doc, dict) and "query_id" in doc and str(doc["query_id"]) != query_id:
        raise ResponseError(f"query {query_id}: the command answered for query "
                            f"{str(doc['query_id'])[:80]!r}")
    return doc


def _start(argv: list[str], stdin) -> subprocess.Popen:
    """The program in a process group of its own (its children are killed with it); its
    stderr is the harness's (passed through, never held in memory)."""
    try:
        return subprocess.Popen(argv, stdin=stdin, stdout=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        raise SystemFailure(f"--command: cannot start {argv[0]!r}: {exc}") from None


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL the program's whole process group (grandchildren holding its pipes too), and
    reap the program."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


class _TooLong:
    """Put in a child's line queue when a line passed the byte cap."""


class _Child:
    """One persistent program and a thread reading its stdout lines (each at most
    ``max_bytes``) into a queue."""

    def __init__(self, argv: list[str], max_bytes: int):
        self.proc = _start(argv, subprocess.PIPE)
        self.max_bytes = max_bytes
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        stdout = self.proc.stdout
        while True:
            line = stdout.readline(self.max_bytes + 1)
            if not line:
                break
            if len(line) > self.max_bytes:
                self.lines.put(_TooLong)  # the rest of the line is never read
                return
            self.lines.put(line)
        self.lines.put(None)

    def ask(self, line: bytes, timeout: float, query_id: str) -> bytes:
        try:
            self.proc.stdin.write(line)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise Transient("died", f"the command exited (code {self.proc.poll()})") from None
        try:
            answer = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise Transient("timeout", f"no answer within {timeout:g} s") from None
        if answer is None:
            code = self.proc.wait()
            raise Transient("died", f"the command exited (code {code}) before answering")
        if answer is _TooLong:
            _kill_group(self.proc)  # the rest of its line is still in the pipe: never reused
            raise ResponseError(f"query {query_id}: the command's answer line is longer than "
                                f"{self.max_bytes} bytes (--max-response-bytes); nothing more "
                                "was read")
        return answer

    def alive(self) -> bool:
        return self.proc.poll() is None

    def close_stdin(self):
        """End its input: a well-behaved program exits on end of file."""
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass


def _read_capped(proc: subprocess.Popen, max_bytes: int, box: dict) -> None:
    """Read the program's stdout to its end into ``box["data"]``; past ``max_bytes`` set
    ``box["over"]`` and kill its process group (it would block on a full pipe for ever)."""
    chunks, size = [], 0
    while True:
        chunk = proc.stdout.read1(65536)
        if not chunk:
            break
        size += len(chunk)
        if size > max_bytes:
            box["over"] = True
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
            break
        chunks.append(chunk)
    box["data"] = b"".join(chunks)


class CommandBackend(SystemBackend):
    name = "command"
    kind = "command"

    def __init__(self, *, command: str, command_mode: str = "persistent",
                 restarts: int = DEFAULT_RESTARTS, **kwargs):
        super().__init__(**kwargs)
        if command_mode not in COMMAND_MODES:
            raise ValueError(f"--command-mode must be one of {COMMAND_MODES}, got {command_mode!r}")
        self.command = command
        self.argv = split_command(command)
        self.mode = command_mode
        self.max_restarts = int(restarts)
        self.restarts = 0
        self._lock = threading.Lock()
        self._idle: queue.Queue = queue.Queue()
        self._children: list[_Child] = []

    def _take(self) -> _Child:
        """An idle program, a new one while fewer than ``concurrency`` run, else wait (a
        slot freed by a program that died is noticed within a tenth of a second)."""
        while True:
            try:
                return self._idle.get_nowait()
            except queue.Empty:
                pass
            with self._lock:
                if len(self._children) < self.concurrency:
                    child = _Child(self.argv, self.max_bytes)
                    self._children.append(child)
                    return child
            try:
                return self._idle.get(timeout=0.1)
            except queue.Empty:
                continue

    def _replace(self, child: _Child) -> None:
        _kill_group(child.proc)
        with self._lock:
            self._children.remove(child)
            self.restarts += 1
            if self.restarts > self.max_restarts:
                raise SystemFailure(f"the command died or hung {self.restarts} times; restarts "
                                    f"are capped at {self.max_restarts} (--command-restarts)")

    def fetch(self, query, k: int):
        line = (json.dumps({"query_id": query.query_id, "query": query.text, "k": k},
                           ensure_ascii=False) + "\n").encode("utf-8")
        if self.mode == "per-query":
            return self._run_once(line, query.query_id)
        child = self._take()
        try:
            answer = child.ask(line, self.policy.timeout, query.query_id)
        except Transient as exc:
            try:
                self._replace(child)
            except SystemFailure as failure:
                raise SystemFailure(f"query {query.query_id}: {exc.detail}; {failure}") from None
            raise
        self._idle.put(child)
        return _decode(answer, query.query_id), "ok"

    def _run_once(self, line: bytes, query_id: str):
        """One process for one query: its stdout read (at most ``max_bytes``) until it
        exits, within ``--http-timeout`` in all; then its process group is killed, so a
        child it left behind cannot hold the pipe open."""
        timeout = self.policy.timeout
        deadline = time.monotonic() + timeout
        proc = _start(self.argv, subprocess.PIPE)
        box: dict = {}
        reader = threading.Thread(target=_read_capped, args=(proc, self.max_bytes, box),
                                  daemon=True)
        reader.start()
        try:
            try:
                proc.stdin.write(line)
                proc.stdin.close()
            except OSError:
                pass  # it exited without reading: its exit code tells
            try:
                code = proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                raise Transient("timeout", f"no answer within {timeout:g} s") from None
        finally:
            _kill_group(proc)
            reader.join(timeout=max(0.1, deadline - time.monotonic()))
            proc.stdout.close()
        if box.get("over"):
            raise ResponseError(f"query {query_id}: the command printed more than "
                                f"{self.max_bytes} bytes (--max-response-bytes)")
        if code != 0:
            raise Transient(f"exit {code}", f"the command exited with code {code} (its "
                                            "stderr is passed through above)")
        if "data" not in box:
            raise Transient("timeout", f"no complete answer within {timeout:g} s")
        return _decode(box["data"], query_id), "ok"

    def target(self) -> dict:
        return {"command": self.command, "command_mode": self.mode}

    def run_stats(self) -> dict:
        stats = super().run_stats()
        stats["restarts"] = self.restarts
        return stats

    def close(self) -> None:
        """Close every program's stdin, give them :data:`STOP_GRACE_SECONDS` together to
        exit, then kill each process group (one that ignores end of file, or blocks writing
        to a pipe nobody reads, costs the grace once, not once per program)."""
        children, self._children = list(self._children), []
        for child in children:
            child.close_stdin()
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for child in children:
            try:
                child.proc.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
            _kill_group(child.proc)
