"""The model libraries, imported on first use and only here.

torch, sentence-transformers, transformers, model2vec and ONNX Runtime take seconds to
import and pull gigabytes of dependencies, so no module imports them at load time
(``import harness`` stays light) and no module but this one imports them at all, and this one
by name: an import contract in ``pyproject.toml`` forbids every import statement of them.  Model libraries run
offline (:func:`harness.core.settings.go_offline`): weights come from packages or folders.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from harness.core import settings

#: top-level names of the libraries that are imported through :func:`load` only
HEAVY: frozenset[str] = frozenset({"torch", "sentence_transformers", "transformers", "model2vec",
                                   "onnxruntime", "onnx"})


def load(name: str) -> ModuleType:
    """Import ``name`` (a module of one of :data:`HEAVY`) offline; a missing library is a
    clear error naming the requirements file that installs it."""
    if name.split(".")[0] not in HEAVY:
        raise ValueError(f"{name!r} is not a model library; import it directly")
    settings.go_offline()
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"{name} is not installed ({exc}); `make venv` installs requirements.txt") from exc
