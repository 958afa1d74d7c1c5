"""The encoder of an ``fp16`` profile: the base transformer in half precision on a CUDA
device.

The base's sentence-transformers model is loaded from its own directory onto the CUDA
device and cast to float16 as a whole (``model.half()``): every product runs on the
device's tensor cores in fp16 with fp32 accumulation (cuBLAS's default for half inputs).
Pooling runs on the device; the vectors come back as float32 and are L2-normalised like
any other model's (:class:`~harness.retrieval.embeddings.encoders.Encoder`).  fp16 keeps 10
bits of mantissa (bfloat16 keeps 8) but only 5 of exponent; MiniLM's activations stay well
inside its range (Micikevicius et al. 2018, "Mixed Precision Training", ICLR).

There is no CPU path: asked for on a machine whose torch sees no CUDA device, the profile is
refused before anything loads (:func:`harness.retrieval.embeddings.devices.resolve_device`).
Its vectors are named by the derivation (base weights, kind, parameters) folded with the
device's name, torch's and CUDA's versions and the precision
(:func:`harness.retrieval.embeddings.encoders.embedding_digest`), so vectors from another
GPU model are another model's, in the cache and in an index.

Batching: by length (:mod:`harness.retrieval.embeddings.batching`), 128 texts per batch: a
GPU is starved by small batches, and MiniLM at 256 tokens x 128 texts needs well under 1 GiB.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.core import heavy
from harness.retrieval.embeddings.devices import resolve_device
from harness.retrieval.embeddings.encoders import (Encoder, derivation_digest,
                                                   load_sentence_transformer, transformer_lengths)
from harness.retrieval.embeddings.profiles import PROFILES, ModelProfile

#: texts per batch (module docstring)
DEFAULT_BATCH = 128


class Fp16CudaEncoder(Encoder):
    """``fp16``: the base transformer cast to float16 on a CUDA device, loaded on the
    first text."""

    precision = "fp16"

    def __init__(self, profile: ModelProfile, path: Path, batch_size: int = DEFAULT_BATCH,
                 device: str = "cuda:0"):
        device = resolve_device(device, profile.kind, profile.model_id)  # refuses the CPU
        if profile.param("precision") != "fp16" or profile.param("device") != "cuda":
            raise ValueError(f"{profile.model_id}: the fp16 kind builds float16 weights on "
                             "a CUDA device only")
        super().__init__(profile, path, batch_size, device)
        if profile.base not in PROFILES or PROFILES[profile.base].kind != "sentence-transformers":
            raise ValueError(f"derived profile {profile.model_id}: base {profile.base!r} is not "
                             "a sentence-transformers profile")
        self.base_weights_sha256 = self.weights_sha256
        self.weights_sha256 = derivation_digest(profile, self.base_weights_sha256)
        self._model = None

    def _load(self):
        if self._model is None:
            model = load_sentence_transformer(self.profile, self.path, self.device)
            model.half()
            model.eval()
            self._model = model
        return self._model

    def token_lengths(self, texts):
        model = self._load()
        return transformer_lengths(model.tokenizer, texts, model.max_seq_length)

    def _encode_raw(self, texts):
        torch = heavy.load("torch")
        model = self._load()
        with torch.inference_mode():
            out = model.encode(list(texts), batch_size=len(texts), show_progress_bar=False,
                               convert_to_tensor=True, normalize_embeddings=False)
        return out.float().cpu().numpy().astype(np.float32, copy=False)

    def describe(self) -> dict:
        return {**super().describe(), "base_weights_sha256": self.base_weights_sha256,
                "batching": f"length-aware, {self.batch_size} texts per batch"}
