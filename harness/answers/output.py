"""Write an answers results directory atomically (the staging scheme of
:func:`harness.results.write_results`: build beside, rename into place).

An exception or Ctrl-C at any point leaves the previous directory as it was; leftovers of a
killed writer are tidied by :func:`harness.results.recover_stale`, which knows these names.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path
from typing import Any, Mapping

from harness.results import RUNINFO, host_info, recover_stale


def _sibling(out: Path, kind: str) -> Path:
    return out.parent / f".{out.name}.{kind}-{os.getpid()}-{secrets.token_hex(4)}"


def write_directory(out_dir, files: Mapping[str, str],
                    runinfo: Mapping[str, Any] | None = None) -> Path:
    """Write ``files`` (name -> text) and ``runinfo.json`` as one directory, atomically."""
    out = Path(out_dir)
    texts = {}
    for name, text in files.items():
        if name == RUNINFO or Path(name).name != name or name.startswith("."):
            raise ValueError(f"results file name {name!r} is reserved or not a plain name")
        texts[name] = text
    info = dict(runinfo or {})
    info.setdefault("host", host_info())
    texts[RUNINFO] = json.dumps(info, indent=2, sort_keys=True, default=str) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    recover_stale(out)
    staging = _sibling(out, "staging")
    staging.mkdir()
    try:
        for name, text in texts.items():
            (staging / name).write_text(text, encoding="utf-8", newline="")
        old = None
        if out.exists():
            old = _sibling(out, "old")
            os.replace(out, old)
        try:
            os.replace(staging, out)
        except BaseException:
            if old is not None and not out.exists():
                os.replace(old, out)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out
