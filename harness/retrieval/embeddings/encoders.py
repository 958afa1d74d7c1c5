"""Encoders: a model profile made callable, loaded from local weights only.

Every encoder exposes ``model_id``, ``weights_sha256``, ``dimension``, ``device``
(``cpu`` / ``cuda:N``: :mod:`harness.retrieval.embeddings.devices`), ``precision``,
``embedding_sha256`` (:func:`embedding_digest`: the weights digest on the CPU, folded with
the device, precision and runtime elsewhere; what keys the embedding cache), ``label``
(``model_id@embedding_sha256[:12]``: what each embedded document records, so vectors from
another device are another model's in an index), the two prefixes, and
``encode_queries`` / ``encode_documents`` returning float32 ``(n, dimension)`` arrays,
L2-normalised when the profile says so.  Prefixes are applied here and nowhere else, so the
embedding cache keys on exactly the text the model read.

Every encoder with a tokenizer batches by token length
(:mod:`harness.retrieval.embeddings.batching`): :meth:`Encoder.token_lengths` gives the
lengths, :meth:`Encoder._encode_raw` sees one length-sorted batch at a time.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Sequence

import numpy as np

from harness.core import heavy, settings
from harness.core.canonical import canonical_line, sha256_file
from harness.retrieval.embeddings.batching import encode_by_length
from harness.retrieval.embeddings.profiles import ModelProfile

log = logging.getLogger(__name__)

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".npy", ".onnx")


def weights_sha256(model_dir) -> str:
    """sha256 of a model directory's weight files.

    One weight file: its own sha256.  Several: the sha256 of ``"relative/path sha256\\n"``
    lines in path order, so the digest names every tensor file and nothing else.
    """
    root = Path(model_dir)
    files = sorted(p for p in root.rglob("*")
                   if p.is_file() and p.suffix in WEIGHT_SUFFIXES
                   and not any(part.startswith(".") for part in p.relative_to(root).parts))
    if not files:
        raise FileNotFoundError(f"no weight files ({', '.join(WEIGHT_SUFFIXES)}) in {root}")
    if len(files) == 1:
        return sha256_file(files[0])
    manifest = "".join(f"{p.relative_to(root).as_posix()} {sha256_file(p)}\n" for p in files)
    return hashlib.sha256(manifest.encode("utf-8")).hexdigest()


def derivation_digest(profile: ModelProfile, base_sha256: str) -> str:
    """sha256 naming a derived model: its id, kind, parameters and the base's weights."""
    return hashlib.sha256(canonical_line({
        "base_weights_sha256": base_sha256, "derivation": dict(profile.derivation),
        "kind": profile.kind, "model_id": profile.model_id}).encode("utf-8")).hexdigest()


def embedding_digest(weights: str, execution: dict) -> str:
    """What names a model's vectors: on the CPU its weights digest (the reference execution:
    a profile whose arithmetic differs there, such as ``bf16`` or ``onnx``, already names its
    precision, runtime and ISA path in that digest), elsewhere the sha256 of the weights
    digest and the execution (device and its name, precision, runtime versions)."""
    if execution.get("device", "cpu") == "cpu":
        return weights
    return hashlib.sha256(canonical_line({"execution": execution, "weights_sha256": weights})
                          .encode("utf-8")).hexdigest()


def execution_block(device: str, precision: str, runtime: str) -> dict:
    """Where and how a model computes (provenance; :func:`embedding_digest`'s input)."""
    out: dict = {"device": device, "precision": precision, "runtime": runtime}
    if device != "cpu":
        from harness.retrieval.embeddings.devices import capability, runtime_versions

        out["device_name"] = capability(device)["path"]
        out["versions"] = runtime_versions(device)
    return out


def provenance_block(encoder) -> dict:
    """What a claim records of an encoder: its profile, weights digest, label and execution
    (device, precision, runtime), the embedding digest where execution changes the vectors,
    and the migration certificate it runs under, if any."""
    out = {**encoder.profile.block(), "weights_sha256": encoder.weights_sha256,
           "label": encoder.label, "execution": encoder.execution}
    if encoder.embedding_sha256 != encoder.weights_sha256:
        out["embedding_sha256"] = encoder.embedding_sha256
    certificate = getattr(encoder, "certificate", None)
    if certificate is not None:
        out["certificate"] = certificate
    return out


def l2_normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32, copy=False)


class Encoder:
    """Base: subclasses implement :meth:`_encode_raw` (texts already prefixed)."""

    #: padded tokens per batch (texts x longest), or None for ``batch_size`` texts per batch
    max_batch_tokens: int | None = None
    #: the arithmetic's precision and the runtime that computes it (provenance)
    precision: str = "fp32"
    runtime: str = "torch"

    def __init__(self, profile: ModelProfile, path: Path, batch_size: int = 64,
                 device: str = "cpu"):
        self.profile = profile
        self.path = path
        self.batch_size = batch_size
        self.device = device
        self._execution: dict | None = None
        self.model_id = profile.model_id
        self.query_prefix = profile.query_prefix
        self.document_prefix = profile.document_prefix
        self.weights_sha256 = weights_sha256(path)
        self.dimension = profile.dimension

    @property
    def execution(self) -> dict:
        if self._execution is None:
            self._execution = execution_block(self.device, self.precision, self.runtime)
        return self._execution

    @property
    def embedding_sha256(self) -> str:
        """What keys this model's cached vectors (:func:`embedding_digest`)."""
        return embedding_digest(self.weights_sha256, self.execution)

    @property
    def label(self) -> str:
        """What an embedded document records as its model: ``model_id@embedding_sha256[:12]``."""
        return f"{self.model_id}@{self.embedding_sha256[:12]}"

    def _encode_raw(self, texts: Sequence[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def token_lengths(self, texts: Sequence[str]) -> list[int] | None:
        """Tokens per text as the model reads them (truncated), or None for an encoder
        without a tokenizer of its own (its texts then go to :meth:`_encode_raw` at once)."""
        return None

    def encode(self, texts: Sequence[str], *, length_aware: bool = True) -> np.ndarray:
        """Embed texts exactly as given (prefixes already applied), in length-sorted batches
        of ``batch_size`` texts, or within ``max_batch_tokens`` padded tokens when set
        (``length_aware=False``: in the given order, for comparison)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        texts = list(texts)
        lengths = self.token_lengths(texts)
        if lengths is None:
            vectors = np.asarray(self._encode_raw(texts), dtype=np.float32)
        else:
            vectors = encode_by_length(texts, lengths, self.batch_size, self._encode_raw,
                                       self.max_batch_tokens, sort=length_aware)
        if vectors.ndim != 2 or vectors.shape != (len(texts), self.dimension):
            raise ValueError(f"{self.model_id}: expected vectors of shape "
                             f"({len(texts)}, {self.dimension}), got {vectors.shape}")
        return l2_normalise(vectors) if self.profile.normalize else vectors

    def query_texts(self, texts: Sequence[str]) -> list[str]:
        return [self.query_prefix + t for t in texts]

    def document_texts(self, texts: Sequence[str]) -> list[str]:
        return [self.document_prefix + t for t in texts]

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode(self.query_texts(texts))

    def encode_documents(self, texts: Sequence[str]) -> np.ndarray:
        return self.encode(self.document_texts(texts))

    def describe(self) -> dict:
        return provenance_block(self)


def offline_transformers() -> None:
    """Load models offline, and without transformers' per-load report and weight-loading
    bar (noise on every run; the harness shows its own progress and records provenance)."""
    settings.go_offline()
    transformers = heavy.load("transformers")

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()


def load_sentence_transformer(profile: ModelProfile, path: Path, device: str):
    """A sentence-transformers model from a local directory, offline, on ``device``; its
    dimension checked against the profile and its sequence length set from it."""
    offline_transformers()
    SentenceTransformer = heavy.load("sentence_transformers").SentenceTransformer
    model = SentenceTransformer(str(path), device=device, local_files_only=True)
    actual = model.get_embedding_dimension()
    if actual != profile.dimension:
        raise ValueError(f"embedding model {profile.model_id}: declared dimension "
                         f"{profile.dimension} but the model produces {actual}")
    if profile.max_seq_length:
        model.max_seq_length = profile.max_seq_length
    return model


class SentenceTransformerEncoder(Encoder):
    """A sentence-transformers model from a local directory (``HF_HUB_OFFLINE``)."""

    def __init__(self, profile: ModelProfile, path: Path, batch_size: int = 64,
                 device: str = "cpu"):
        super().__init__(profile, path, batch_size, device)
        self.model = load_sentence_transformer(profile, path, device)

    def token_lengths(self, texts):
        return transformer_lengths(self.model.tokenizer, texts, self.model.max_seq_length)

    def _encode_raw(self, texts):
        return self.model.encode(texts, batch_size=len(texts), show_progress_bar=False,
                                 convert_to_numpy=True, normalize_embeddings=False)


def transformer_lengths(tokenizer, texts, max_length: int | None) -> list[int]:
    """Tokens per text, special tokens included, truncated at ``max_length``."""
    ids = tokenizer(list(texts), add_special_tokens=True, truncation=max_length is not None,
                    max_length=max_length)["input_ids"]
    return [len(row) for row in ids]


class StaticEncoder(Encoder):
    """A model2vec static model (token-vector lookup and mean pooling) from a directory."""

    runtime = "model2vec"

    def __init__(self, profile: ModelProfile, path: Path, batch_size: int = 1024,
                 device: str = "cpu"):
        super().__init__(profile, path, batch_size, device)
        StaticModel = heavy.load("model2vec").StaticModel

        self.model = StaticModel.from_pretrained(str(path), force_download=False)
        actual = int(self.model.dim)
        if actual != profile.dimension:
            raise ValueError(f"embedding model {profile.model_id}: declared dimension "
                             f"{profile.dimension} but the model produces {actual}")

    def token_lengths(self, texts):
        return [len(e.ids) for e in self.model.tokenizer.encode_batch_fast(
            list(texts), add_special_tokens=False)]

    def _encode_raw(self, texts):
        return self.model.encode(texts, batch_size=len(texts), show_progress_bar=False,
                                 use_multiprocessing=False)
