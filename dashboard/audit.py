"""Team mode's audit log: every view and export of internal rows, one JSON line each (who,
when, what), appended to a file beside the snapshots (never the snapshots themselves).

No streamlit here.  Each record is one ``write`` of one whole line to a file opened for
appending (``O_APPEND``), so concurrent sessions never interleave within a line, and it is
fsynced before the page shows the rows: a view that was not recorded is not shown.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any


def record(path: Path, who: str, event: str, what: dict[str, Any],
           now: datetime | None = None) -> dict[str, Any]:
    """Append ``{"at", "who", "event", **what}`` to ``path`` as one line and return it."""
    entry = {"at": (now or datetime.now(timezone.utc)).isoformat(timespec="seconds"),
             "who": who, "event": event, **what}
    line = (json.dumps(entry, sort_keys=True, default=str, ensure_ascii=False) + "\n").encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o640)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
    return entry


def read(path: Path) -> list[dict[str, Any]]:
    """Every record of the log at ``path``, oldest first (empty when there is none)."""
    if not Path(path).exists():
        return []
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
