"""Every model a profile names, loaded: the base encoders, the derived kinds
(:data:`harness.retrieval.embeddings.profiles.DERIVED_KINDS`) built offline from a base, and
the lazy encoders a migration study compares.

* :func:`load_encoder` loads any profile (base or derived); missing weights raise.
* :class:`LazyEncoder` wraps :func:`load_encoder`: its weights digest is
  computed from the files, the model itself is loaded only when the cache lacks a text, so
  a rerun over cached texts loads no model at all.
* ``rotated``: the base's vectors times a fixed orthogonal matrix, drawn Haar-uniformly as
  the Q of a seeded Gaussian matrix's QR decomposition with the signs of R's diagonal moved
  into Q (Mezzadri 2007, "How to generate random matrices from the classical compact
  groups", Notices AMS 54:592-604).  Inner products are preserved exactly, so the rotated
  model retrieves what the base retrieves.
* ``truncated``: the base's first ``dims`` coordinates, renormalised.
* ``repooled``: the base transformer read out with another pooling (e.g. CLS).
* ``onnx``: the base transformer exported to ONNX once per machine
  (:mod:`harness.retrieval.embeddings.onnx_encoder`); its weights are the export's file.
* ``bf16``: the base transformer with bfloat16 linear layers under CPU autocast
  (:mod:`harness.retrieval.embeddings.bf16_encoder`); its ``weights_sha256`` also names
  torch's version and the CPU's ISA path.
* ``distilled``: a model2vec static model distilled from the base (``model2vec.distill``,
  PCA to ``pca_dims``), built once per machine into the per-user models folder
  (``settings.models_dir``) and keyed by the base's weights digest, the derivation's
  parameters and the model2vec version.

The base of a ``rotated`` or ``truncated`` model is reached through the same embedding
cache as any model (same key: base model id, base weights, exact text), so a study whose
OLD model is the base embeds each text once.  A derived model's ``weights_sha256`` is the
sha256 of its derivation (base weights digest, kind, parameters; for ``bf16`` also torch's
version and the ISA path), except a distilled or ONNX one, whose weights are real files and
are digested as such; ``base_weights_sha256`` names the base either way.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from harness.core import heavy
from harness.core.canonical import canonical_line
from harness.retrieval.embeddings.bf16_encoder import Bf16Encoder
from harness.retrieval.embeddings.cache import CachedEncoder, EmbeddingCache
from harness.retrieval.embeddings.devices import resolve_device
from harness.retrieval.embeddings.encoders import (Encoder, SentenceTransformerEncoder,
                                                   StaticEncoder, derivation_digest,
                                                   embedding_digest,
                                                   execution_block, offline_transformers,
                                                   provenance_block,
                                                   transformer_lengths, weights_sha256)
from harness.retrieval.embeddings.fp16_encoder import Fp16CudaEncoder
from harness.retrieval.embeddings.onnx_encoder import OnnxEncoder
from harness.retrieval.embeddings.profiles import (DERIVED_KINDS, PROFILES, ModelProfile,
                                                   resolve_profile, source_path)
from harness.core.seeding import derive_rng

log = logging.getLogger(__name__)

#: sub-directory of the cache directory holding distilled models
MODELS_DIR = "models"


def rotation_matrix(dim: int, seed: int) -> np.ndarray:
    """A Haar-random ``dim x dim`` orthogonal matrix for ``seed`` (float64; module docstring)."""
    rng = derive_rng(seed, "migration", "rotation", str(dim))
    q, r = np.linalg.qr(rng.standard_normal((dim, dim)))
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)


def _base_profile(profile: ModelProfile) -> ModelProfile:
    if profile.base not in PROFILES:
        raise ValueError(f"derived profile {profile.model_id}: base {profile.base!r} is not a "
                         f"profile; known: {sorted(PROFILES)}")
    base = PROFILES[profile.base]
    if base.kind in DERIVED_KINDS:
        raise ValueError(f"derived profile {profile.model_id}: base {base.model_id} is itself "
                         "derived; derive from a model with weights")
    return base


class LazyEncoder:
    """The encoder a (non-derived) profile describes, loaded on its first :meth:`encode`.

    Has the attributes of :class:`~harness.retrieval.embeddings.encoders.Encoder` that the cache and
    a report read (``model_id``, ``weights_sha256``, ``dimension``, prefixes, ``label``).
    """

    def __init__(self, profile: ModelProfile, batch_size: int | None = None,
                 device: str | None = "cpu"):
        if profile.kind in DERIVED_KINDS:
            raise ValueError(f"{profile.model_id} is a derived profile: use build_encoder")
        self.profile = profile
        self.batch_size = batch_size
        self.device = resolve_device(device, profile.kind, profile.model_id)
        self.precision = "fp32"
        self.execution = execution_block(self.device, self.precision,
                                         "model2vec" if profile.kind == "model2vec" else "torch")
        self.model_id = profile.model_id
        self.dimension = profile.dimension
        self.query_prefix = profile.query_prefix
        self.document_prefix = profile.document_prefix
        path = source_path(profile.source)
        if not path.is_dir():
            raise FileNotFoundError(f"embedding model {profile.model_id}: weights directory "
                                    f"{path} does not exist")
        self.weights_sha256 = weights_sha256(path)
        self._encoder: Encoder | None = None

    @property
    def embedding_sha256(self) -> str:
        return embedding_digest(self.weights_sha256, self.execution)

    @property
    def label(self) -> str:
        return f"{self.model_id}@{self.embedding_sha256[:12]}"

    @property
    def loaded(self) -> bool:
        return self._encoder is not None

    def _load(self) -> Encoder:
        if self._encoder is None:
            encoder = load_encoder(self.profile, self.batch_size, device=self.device)
            if encoder.embedding_sha256 != self.embedding_sha256:
                raise ValueError(f"embedding model {self.model_id}: weights changed while "
                                 "loading (digest differs); rerun")
            self._encoder = encoder
        return self._encoder

    def query_texts(self, texts: Sequence[str]) -> list[str]:
        return [self.query_prefix + t for t in texts]

    def document_texts(self, texts: Sequence[str]) -> list[str]:
        return [self.document_prefix + t for t in texts]

    def token_lengths(self, texts: Sequence[str]) -> list[int] | None:
        """The loaded encoder's tokens per text (loads the model)."""
        return self._load().token_lengths(texts)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self._load().encode(texts)

    def describe(self) -> dict:
        return provenance_block(self)


class _Verbatim:
    """An encoder seen by :class:`CachedEncoder` with no prefixes: a derived model's texts
    already carry their prefixes when they reach the base."""

    def __init__(self, encoder):
        self.encoder = encoder
        self.model_id = encoder.model_id
        self.weights_sha256 = encoder.weights_sha256
        self.embedding_sha256 = encoder.embedding_sha256
        self.dimension = encoder.dimension

    @property
    def label(self) -> str:
        return self.encoder.label

    @staticmethod
    def query_texts(texts):
        return list(texts)

    @staticmethod
    def document_texts(texts):
        return list(texts)

    def encode(self, texts):
        return self.encoder.encode(texts)


class _Derived(Encoder):
    """Common to derived encoders: the base's weights are hashed as the base's, and the
    derived model is named by its derivation digest."""

    def __init__(self, profile: ModelProfile, path: Path, batch_size: int = 64,
                 device: str = "cpu"):
        super().__init__(profile, path, batch_size, device)
        self.base_profile = _base_profile(profile)
        self.base_weights_sha256 = self.weights_sha256
        self.weights_sha256 = derivation_digest(profile, self.base_weights_sha256)

    def describe(self) -> dict:
        return {**super().describe(), "base_weights_sha256": self.base_weights_sha256}


class TransformedEncoder(_Derived):
    """``rotated`` or ``truncated``: a fixed transform of the base's vectors, which come
    through ``cache`` (when given) under the base's own key."""

    def __init__(self, profile: ModelProfile, path: Path, batch_size: int | None = None,
                 cache: EmbeddingCache | None = None, base: "LazyEncoder | None" = None,
                 device: str = "cpu"):
        if base is not None:
            device = base.device
        super().__init__(profile, path, batch_size or 64, device)
        base_profile = self.base_profile
        if (profile.query_prefix, profile.document_prefix) != (base_profile.query_prefix,
                                                               base_profile.document_prefix):
            raise ValueError(f"derived profile {profile.model_id}: prefixes must be its base's "
                             f"({base_profile.query_prefix!r}, {base_profile.document_prefix!r})")
        if base is not None and base.profile != base_profile:
            raise ValueError(f"{profile.model_id}: the shared base encoder is "
                             f"{base.model_id}, not {base_profile.model_id}")
        self.base = base if base is not None else LazyEncoder(base_profile, batch_size, device)
        if self.base.weights_sha256 != self.base_weights_sha256:
            raise ValueError(f"{profile.model_id}: base weights digest mismatch")
        self._base_cached = CachedEncoder(_Verbatim(self.base), cache, progress=False)
        width = base_profile.dimension
        if profile.kind == "rotated":
            if profile.dimension != width:
                raise ValueError(f"{profile.model_id}: a rotation keeps the dimension "
                                 f"({width}), declared {profile.dimension}")
            self.matrix = rotation_matrix(width, int(profile.param("seed")))
        elif profile.kind == "truncated":
            dims = int(profile.param("dims"))
            if not 0 < dims <= width or dims != profile.dimension:
                raise ValueError(f"{profile.model_id}: truncation to {dims} dimensions must "
                                 f"equal the declared {profile.dimension} and be at most "
                                 f"{width}")
            self.matrix = None
        else:
            raise ValueError(f"TransformedEncoder does not build kind {profile.kind!r}")

    def _encode_raw(self, texts):
        base = self._base_cached.encode_documents(texts).astype(np.float64)
        if self.matrix is not None:
            return base @ self.matrix
        return base[:, :self.dimension]


class RepooledEncoder(_Derived):
    """``repooled``: the base transformer with the pooling the profile names (loaded on the
    first text the cache lacks)."""

    def __init__(self, profile: ModelProfile, path: Path, batch_size: int | None = None,
                 cache: EmbeddingCache | None = None, device: str = "cpu"):
        super().__init__(profile, path, batch_size or 64, device)
        self._model = None

    def _load(self):
        if self._model is None:
            offline_transformers()
            st = heavy.load("sentence_transformers")
            SentenceTransformer, models = st.SentenceTransformer, st.models

            transformer = models.Transformer(str(self.path),
                                             max_seq_length=self.profile.max_seq_length)
            width = transformer.get_word_embedding_dimension()
            if width != self.dimension:
                raise ValueError(f"embedding model {self.model_id}: declared dimension "
                                 f"{self.dimension} but the transformer produces {width}")
            pooling = models.Pooling(width, pooling_mode=self.profile.pooling)
            self._model = SentenceTransformer(modules=[transformer, pooling],
                                              device=self.device)
        return self._model

    def token_lengths(self, texts):
        model = self._load()
        return transformer_lengths(model.tokenizer, texts, model.max_seq_length)

    def _encode_raw(self, texts):
        return self._load().encode(texts, batch_size=len(texts), show_progress_bar=False,
                                   convert_to_numpy=True, normalize_embeddings=False)


def distilled_dir(profile: ModelProfile, base_sha256: str, models_dir) -> Path:
    """Where the distilled model of ``profile`` lives: keyed by base weights, parameters
    and the model2vec version (a new version may distil other weights)."""
    model2vec = heavy.load("model2vec")

    key = hashlib.sha256(canonical_line({
        "base": profile.base, "base_weights_sha256": base_sha256,
        "derivation": dict(profile.derivation), "model2vec": model2vec.__version__,
    }).encode("utf-8")).hexdigest()
    return Path(models_dir) / f"{profile.model_id}-{key[:16]}"


def ensure_distilled(profile: ModelProfile, models_dir=None) -> Path:
    """The distilled model's directory, distilling it first if it is not there (about two
    minutes on two cores), once per machine: ``models_dir`` defaults to the per-user folder
    (``settings.models_dir``), and concurrent builds are serialised
    (:func:`harness.retrieval.embeddings.static_model.build_once`)."""
    from harness.core import settings
    from harness.retrieval.embeddings.static_model import build_once

    base = _base_profile(profile)
    base_path = source_path(base.source)
    base_sha = weights_sha256(base_path)
    target = distilled_dir(profile, base_sha, models_dir or settings.models_dir())

    def build(tmp: Path) -> None:
        offline_transformers()  # no per-load report block from transformers
        distill = heavy.load("model2vec.distill").distill
        model = distill(model_name=str(base_path), device="cpu",
                        pca_dims=int(profile.param("pca_dims")),
                        sif_coefficient=float(profile.param("sif_coefficient")))
        model.save_pretrained(str(tmp))

    return build_once(target, build, f"{profile.model_id} (distilled from {base.model_id})")[0]


class DistilledEncoder(StaticEncoder):
    """``distilled``: the static model built by :func:`ensure_distilled`."""

    def __init__(self, profile: ModelProfile, path: Path, batch_size: int = 1024,
                 device: str = "cpu"):
        base = _base_profile(profile)
        self.base_weights_sha256 = weights_sha256(source_path(base.source))
        super().__init__(profile, path, batch_size, device)

    def describe(self) -> dict:
        return {**super().describe(), "base_weights_sha256": self.base_weights_sha256}


def build_encoder(profile: ModelProfile, batch_size: int | None = None,
                  cache: EmbeddingCache | None = None, models_dir=None,
                  base: LazyEncoder | None = None, device: str | None = "cpu") -> Encoder:
    """The encoder of a derived profile (what ``load_encoder`` calls for these kinds);
    ``base`` shares an already-open base encoder (one model in memory, not two).
    ``device`` (``auto``/``cpu``/``cuda[:N]``) is refused when the kind cannot run there."""
    if profile.kind not in DERIVED_KINDS:
        raise ValueError(f"{profile.model_id}: kind {profile.kind!r} is not derived; "
                         f"derived kinds: {sorted(DERIVED_KINDS)}")
    device = resolve_device(device, profile.kind, profile.model_id)
    base_path = source_path(profile.source)
    kwargs: dict = {} if batch_size is None else {"batch_size": batch_size}
    if profile.kind in ("onnx", "bf16", "fp16"):
        cls = {"onnx": OnnxEncoder, "bf16": Bf16Encoder, "fp16": Fp16CudaEncoder}[profile.kind]
        return cls(profile, base_path, device=device, **kwargs)
    if profile.kind in ("rotated", "truncated"):
        return TransformedEncoder(profile, base_path, batch_size, cache, base, device=device)
    if profile.kind == "repooled":
        return RepooledEncoder(profile, base_path, batch_size, cache, device=device)
    path = ensure_distilled(profile, models_dir)
    return DistilledEncoder(profile, path, device=device, **kwargs)


def open_encoders(profiles: Sequence[ModelProfile], cache: EmbeddingCache | None = None,
                  models_dir=None, batch_size: int | None = None,
                  device: str | None = "cpu") -> list:
    """The encoders a migration study uses, in order: lazy for models with weights, derived
    ones sharing ``cache`` with their base, and one base encoder per base model (a study of
    MiniLM -> rotated MiniLM holds one transformer, loaded only if the cache lacks a text).
    ``device`` applies to every model whose kind runs there (``auto``: each model's best;
    a CUDA-only profile runs on CUDA whatever the other side's device)."""
    plain: dict[ModelProfile, LazyEncoder] = {}

    def lazy(profile):
        if profile not in plain:
            plain[profile] = LazyEncoder(profile, batch_size, device)
        return plain[profile]

    out = []
    for profile in profiles:
        if profile.kind in DERIVED_KINDS:
            base = lazy(_base_profile(profile)) if profile.kind in ("rotated", "truncated") else None
            out.append(build_encoder(profile, batch_size, cache, models_dir, base,
                                     device="auto" if profile.kind == "fp16" else device))
        else:
            out.append(lazy(profile))
    return out


def resolve_model(name: str, side: str, *, dim: int | None = None,
                  query_prefix: str | None = None, document_prefix: str | None = None,
                  model_id: str | None = None) -> ModelProfile:
    """The profile for ``--old`` / ``--new`` (``side`` is ``old`` or ``new``).

    A profile name (or the directory of a known model) gives its profile.  Any other
    directory needs its dimension and both prefixes (``--{side}-dim``,
    ``--{side}-query-prefix``, ``--{side}-document-prefix``); prefixes are never guessed
    and a missing dimension is an error naming the flag.
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"--{side}: give a model (a profile name or a local directory); "
                         f"profiles: {sorted(PROFILES)}")
    known = resolve_known(name)
    if known is None:
        if not Path(name).is_dir():
            raise ValueError(f"--{side} {name!r}: not a profile ({sorted(PROFILES)}) and not "
                             "a local directory")
        missing = [f"--{side}-{flag}" for flag, value in (
            ("dim", dim), ("query-prefix", query_prefix), ("document-prefix", document_prefix))
            if value is None]
        if missing:
            raise ValueError(f"--{side} {name!r} has no profile: give {', '.join(missing)} "
                             "(its output dimension, and both prefixes: they are never "
                             "guessed; an empty prefix is '')")
    try:
        return resolve_profile(name, dim=dim, query_prefix=query_prefix,
                               document_prefix=document_prefix, model_id=model_id)
    except ValueError as exc:
        raise ValueError(f"--{side}: {exc}".replace("--dim", f"--{side}-dim")
                         .replace("--query-prefix", f"--{side}-query-prefix")
                         .replace("--document-prefix", f"--{side}-document-prefix")) from None


def resolve_known(name: str) -> ModelProfile | None:
    """The profile a name or directory resolves to without any flag, else None."""
    try:
        return resolve_profile(name)
    except ValueError:
        return None


# --------------------------------------------------------------------------- loading any profile


def _derived_encoder(profile: ModelProfile, path: Path, **kwargs) -> Encoder:
    """A derived profile's encoder (``profiles.DERIVED_KINDS``), built on its base's weights."""
    return build_encoder(profile, **kwargs)


ENCODER_KINDS: dict[str, Callable[..., Encoder]] = {
    "sentence-transformers": SentenceTransformerEncoder,
    "model2vec": StaticEncoder,
    **{kind: _derived_encoder for kind in DERIVED_KINDS},
}


def load_encoder(profile: ModelProfile, batch_size: int | None = None,
                 device: str | None = "cpu") -> Encoder:
    """Load the encoder a profile describes on ``device`` (``auto``/``cpu``/``cuda[:N]``,
    :func:`harness.retrieval.embeddings.devices.resolve_device`); missing weights raise
    FileNotFoundError, an absent or unsuitable device DeviceUnavailable (a ValueError)."""
    if profile.kind not in ENCODER_KINDS:
        raise ValueError(f"unknown encoder kind {profile.kind!r}; "
                         f"expected one of {sorted(ENCODER_KINDS)}")
    path = source_path(profile.source)
    if not path.is_dir():
        raise FileNotFoundError(f"embedding model {profile.model_id}: weights directory "
                                f"{path} does not exist")
    kwargs: dict = {} if batch_size is None else {"batch_size": batch_size}
    kwargs["device"] = resolve_device(device, profile.kind, profile.model_id)
    log.info("loading embedding model %s (%s) on %s", profile.model_id, profile.kind,
             kwargs["device"])
    return ENCODER_KINDS[profile.kind](profile, path, **kwargs)
