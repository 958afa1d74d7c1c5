"""One active ingester per store: a lease kept in the store itself, by put-if-absent only.

A lease is a sequence of generation objects ``ingester/lease/<generation>`` (12 digits),
each naming its owner and when it expires.  The newest generation is the lease:

* nobody holds it (no generation, or the newest has expired): write generation ``n + 1``
  with put-if-absent; of several contenders exactly one write succeeds;
* the holder renews by writing ``n + 1`` itself, and lost the lease if that name is taken;
* a holder that sees a newer generation than its own stops applying.

Put-if-absent is the store's only atomic step (a file link; S3 ``If-None-Match: *``), so
no compare-and-swap or clock agreement beyond the expiry is needed; a holder paused past
its expiry can at worst overlap one submission with its successor, which the warehouse
itself absorbs (the writer lock and the applied set in the same transaction as the rows).
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time
import uuid
from dataclasses import dataclass, field

from harness.core.store import Store, StoreError

log = logging.getLogger(__name__)

PREFIX = "ingester/lease/"
DEFAULT_TTL = 60.0
#: generations kept behind the newest (older ones are removed by the holder)
KEEP = 4


def _name(generation: int) -> str:
    return f"{PREFIX}{generation:012d}"


def _generations(store: Store) -> list[int]:
    found = []
    for key in store.list(PREFIX):
        tail = key[len(PREFIX):]
        if len(tail) == 12 and tail.isdigit():
            found.append(int(tail))
    return sorted(found)


@dataclass
class Lease:
    """This process's claim on the store's ingester lease."""

    store: Store
    ttl: float = DEFAULT_TTL
    owner: str = field(default_factory=lambda: uuid.uuid4().hex)
    generation: int | None = None  #: the generation this process wrote last
    holder: str = ""               #: who holds it, when this process does not
    written_at: float | None = None  #: time.monotonic() of that write

    def fresh(self) -> bool:
        """Held, and written less than a third of its lifetime ago: nobody can take it over
        for at least two thirds of it, so there is no need to look at the store."""
        return self.generation is not None and self.written_at is not None \
            and time.monotonic() - self.written_at < self.ttl / 3

    def _read(self, generation: int) -> dict:
        try:
            doc = json.loads(self.store.get(_name(generation), max_bytes=4096))
        except (KeyError, ValueError):
            return {}
        return doc if isinstance(doc, dict) else {}

    def _write(self, generation: int) -> bool:
        started = time.monotonic()
        doc = {"owner": self.owner, "host": socket.gethostname(), "pid": os.getpid(),
               "expires_at": time.time() + self.ttl}
        if not self.store.put_if_absent(_name(generation), json.dumps(doc).encode("utf-8")):
            return False
        self.written_at = started
        return True

    def acquire(self) -> bool:
        """Take or renew the lease; False when another live holder has it."""
        generations = _generations(self.store)
        newest = generations[-1] if generations else 0
        if newest:
            doc = self._read(newest)
            mine = doc.get("owner") == self.owner
            expires = doc.get("expires_at")
            live = isinstance(expires, (int, float)) and expires > time.time()
            if not mine and live:
                self.generation = None
                self.holder = f"{doc.get('host')} pid {doc.get('pid')}"
                return False
            if mine and newest != self.generation:  # not what we wrote last: be safe
                self.generation = None
        if not self._write(newest + 1):
            self.generation = None
            self.holder = "another ingester (it took the lease just now)"
            return False
        self.generation, self.holder = newest + 1, ""
        for old in generations[:-KEEP]:
            try:
                self.store.delete(_name(old))
            except StoreError as exc:
                log.debug("could not remove old lease generation %s: %s", old, exc)
        return True

    def held(self) -> bool:
        """Is the lease still ours (nobody wrote a newer generation)?"""
        if self.generation is None:
            return False
        generations = _generations(self.store)
        return bool(generations) and generations[-1] == self.generation

    def release(self) -> None:
        """Let the next ingester in at once: a generation that has already expired."""
        if self.generation is None or not self.held():
            return
        doc = {"owner": self.owner, "released": True, "expires_at": 0}
        self.store.put_if_absent(_name(self.generation + 1), json.dumps(doc).encode("utf-8"))
        self.generation = None
