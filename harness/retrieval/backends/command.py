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
``query_id`` is refused.  What the program prints on stderr is passed through.
"""

from __future__ import annotations

import json
import queue
import shlex
import subprocess
import threading

from harness.retrieval.backends.fieldmap import ResponseError
from harness.retrieval.backends.retry import SystemFailure, Transient
from harness.retrieval.backends.system import SystemBackend

COMMAND_MODES = ("persistent", "per-query")
DEFAULT_RESTARTS = 3


def split_command(command: str) -> list[str]:
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ValueError(f"--command: cannot split {command!r}: {exc}") from None
    if not argv:
        raise ValueError("--command: empty")
    return argv


def _decode(line: str, query_id: str):
    try:
        doc = json.loads(line)
    except ValueError as exc:
        raise ResponseError(f"query {query_id}: the command printed {line.strip()[:60]!r}, not a JSON "
                            f"line ({exc})") from None
    if isinstance(doc, dict) and "query_id" in doc and str(doc["query_id"]) != query_id:
        raise ResponseError(f"query {query_id}: the command answered for query "
                            f"{doc['query_id']!r}")
    return doc


class _Child:
    """One persistent program and a thread reading its stdout lines into a queue."""

    def __init__(self, argv: list[str]):
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         text=True, encoding="utf-8", bufsize=1)
        except OSError as exc:
            raise SystemFailure(f"--command: cannot start {argv[0]!r}: {exc}") from None
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def ask(self, line: str, timeout: float) -> str:
        try:
            self.proc.stdin.write(line + "\n")
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
        return answer

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


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
                    child = _Child(self.argv)
                    self._children.append(child)
                    return child
            try:
                return self._idle.get(timeout=0.1)
            except queue.Empty:
                continue

    def _replace(self, child: _Child) -> None:
        child.proc.kill()
        child.proc.wait()
        with self._lock:
            self._children.remove(child)
            self.restarts += 1
            if self.restarts > self.max_restarts:
                raise SystemFailure(f"the command died or hung {self.restarts} times; restarts "
                                    f"are capped at {self.max_restarts} (--command-restarts)")

    def fetch(self, query, k: int):
        line = json.dumps({"query_id": query.query_id, "query": query.text, "k": k},
                          ensure_ascii=False)
        if self.mode == "per-query":
            return self._run_once(line, query.query_id)
        child = self._take()
        try:
            answer = child.ask(line, self.policy.timeout)
        except Transient as exc:
            try:
                self._replace(child)
            except SystemFailure as failure:
                raise SystemFailure(f"query {query.query_id}: {exc.detail}; {failure}") from None
            raise
        self._idle.put(child)
        return _decode(answer, query.query_id), "ok"

    def _run_once(self, line: str, query_id: str):
        try:
            done = subprocess.run(self.argv, input=line + "\n", capture_output=True, text=True,
                                  encoding="utf-8", timeout=self.policy.timeout)
        except subprocess.TimeoutExpired:
            raise Transient("timeout", f"no answer within {self.policy.timeout:g} s") from None
        except OSError as exc:
            raise SystemFailure(f"--command: cannot start {self.argv[0]!r}: {exc}") from None
        if done.returncode != 0:
            tail = done.stderr.strip().splitlines()[-1:] or [""]
            raise Transient(f"exit {done.returncode}",
                            f"the command exited with code {done.returncode} ({tail[0][:120]!r})")
        return _decode(done.stdout, query_id), "ok"

    def target(self) -> dict:
        return {"command": self.command, "command_mode": self.mode}

    def run_stats(self) -> dict:
        stats = super().run_stats()
        stats["restarts"] = self.restarts
        return stats

    def close(self) -> None:
        for child in list(self._children):
            child.stop()
        self._children.clear()
