"""A model derived from packaged weights, built once per machine.

The distilled static model (``minilm-static-256``) takes minutes to build on two cores, so
it lives in one per-user folder (``harness.core.settings.models_dir``: ``$HARNESS_MODELS``,
else ``~/.cache/retrieval-eval/models``) under a name keyed by everything it is built from,
not in each run's cache folder.  Concurrent builds and interrupted ones are handled by
:func:`harness.retrieval.embeddings.once.build_once`, which the ONNX exports share.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

from harness.retrieval.embeddings import once

#: the file whose presence marks a complete model directory
COMPLETE = "model.safetensors"


def is_complete(target: Path) -> bool:
    return (Path(target) / COMPLETE).is_file()


def build_once(target: Path, build: Callable[[Path], None], what: str) -> tuple[Path, bool]:
    """``(target, built)``: ``target`` complete, built by ``build(tmp_dir)`` unless it already
    was (``built`` False).  ``what`` names the model in the one line printed before a build."""
    target = Path(target)

    def announced(tmp: Path) -> None:
        print(f"building {what} once for this machine (a few minutes on two cores; kept in "
              f"{target.parent})", file=sys.stderr, flush=True)
        tmp.rmdir()  # handed over empty: this builder creates the directory it writes
        build(tmp)

    return target, once.build_once(target, is_complete, announced)
