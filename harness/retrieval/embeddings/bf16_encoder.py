"""The encoder of a ``bf16`` profile: the base transformer with bfloat16 matrix products on
the CPU (Intel AMX tiles or AVX512-BF16 where the CPU has them).

The model is the base's sentence-transformers model from its own directory.  Every
``nn.Linear`` (the Q/K/V, attention-output and feed-forward projections: nearly all of the
arithmetic) holds its weights in bfloat16, cast once at load, and runs under
``torch.autocast("cpu", dtype=torch.bfloat16)``, so each product takes bfloat16 inputs and
accumulates in fp32 (oneDNN).  The attention runs in the fused CPU kernel
(``scaled_dot_product_attention``), whose softmax accumulates in fp32.  Kept in fp32: the
token/position embeddings, every LayerNorm (on autocast's fp32 list), the residual sums
(bfloat16 + fp32 promotes to fp32), mean pooling and L2 normalisation.  Casting the whole
model (LayerNorm included) loses more (cosine to fp32 down to 0.998, against 0.9999 here).
bfloat16 keeps fp32's exponent and 8 bits of mantissa (Kalamkar et al. 2019, "A Study of
BFLOAT16 for Deep Learning Training", arXiv:1905.12322).

bfloat16 results depend on the kernels the CPU's instruction set selects, so the ISA path
(:func:`isa_path`: ATen's CPU capability, AMX tiles, AVX512-BF16, oneDNN's ISA limits) and
torch's version are part of the model's ``weights_sha256`` (what keys its cached vectors and
names it in an index), next to the base's weights digest and the derivation: vectors from
another CPU path are another model's, never served from the cache and refused when mixed.

Batching: by token budget over the length order
(:mod:`harness.retrieval.embeddings.batching`): a batch holds at most
:data:`BATCH_TOKENS` padded tokens (texts x longest) and :data:`DEFAULT_BATCH` texts, so 8
full-length turns (256 tokens) or up to 64 short ones.  Measured on two shared Sapphire
Rapids cores (texts/s against raw fp32 ``SentenceTransformer.encode`` at batch 32, side by
side; ratios move by 2x between runs on a shared machine): on full-length turns fixed
batches of 8-12 ran fastest (2.3-3.2x; 4 and 32 slower: per-call overhead, and a larger
batch's activations leaving the cache), and the budget of 8 x 256 matches them there; on a
sample of chunks as indexed and on short texts the budget ran 1.2-1.9x faster than fixed
batches of 8 (fewer, fuller calls for short texts).  Tried and dropped: bfloat16 products
with fp32 outputs (oneDNN's bf16 math mode for fp32 matmuls) and bfloat16 linear layers
without autocast (attention in fp32): no closer to fp32 (cosine mean 0.99998 all three) and
slower; the difference is bfloat16's 8-bit mantissa on the products' inputs.
Also tried and dropped: "bf16x3" products (each operand split into bfloat16 high and
low parts, hi@hi + hi@lo + lo@hi accumulated in fp32; Henry, Tang & Heinecke 2019,
"Leveraging the bfloat16 Artificial Intelligence Datatype For Higher-Precision
Computations", arXiv:1904.06376): cosine to fp32 mean 0.999999 (min 0.999996), but torch
has no CPU bfloat16 product with fp32 output, so the three products ran as fp32 matmuls in
oneDNN's bf16 math mode: 0.6-1.0x raw fp32 on full-length turns (this profile 2.3-3.1x in
the same runs), short of the 2x target.

A row's vector can depend on the rest of its padded batch by bfloat16 rounding (measured:
cosine 0.99999 against the same text alone), so batches are always formed by the length
order (longest first, ties by position) and the same texts give byte-identical vectors run
to run; one or two torch threads give the same bytes.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import numpy as np

from harness.core import heavy
from harness.core.canonical import canonical_line
from harness.retrieval.embeddings.encoders import (Encoder, load_sentence_transformer,
                                                   transformer_lengths)
from harness.retrieval.embeddings.profiles import ModelProfile

#: padded tokens per batch: 8 full-length turns (module docstring: fastest on them)
BATCH_TOKENS = 2048

#: texts per batch at most (short texts; module docstring)
DEFAULT_BATCH = 64

#: what stays in fp32 (recorded in provenance)
KEPT_FP32 = ("embeddings", "layer_norm", "softmax_accumulation", "residual_sums",
             "mean_pooling", "l2_normalisation")

#: environment variables that restrict oneDNN's instruction set (part of the ISA path)
ONEDNN_ISA_VARIABLES = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY")


def isa_path() -> dict:
    """The CPU path bfloat16 products run on here: ATen's capability, the CPU's native
    bfloat16 units, and any variable limiting oneDNN's ISA (None when unset)."""
    torch = heavy.load("torch")
    cpu = torch.cpu
    amx = bool(cpu._is_amx_tile_supported())
    avx512_bf16 = bool(cpu._is_avx512_bf16_supported())
    return {
        "cpu_capability": str(torch.backends.cpu.get_cpu_capability()),
        "amx_tile": amx,
        "avx512_bf16": avx512_bf16,
        "native_bf16": amx or avx512_bf16,
        "mkldnn_bf16": bool(torch.ops.mkldnn._is_mkldnn_bf16_supported()),
        "env": {name: os.environ.get(name) for name in ONEDNN_ISA_VARIABLES},
    }


def bf16_digest(profile: ModelProfile, base_sha256: str, torch_version: str,
                isa: dict) -> str:
    """sha256 naming the bfloat16 model on this CPU path: id, kind, derivation, the base's
    weights, torch's version and the ISA path."""
    return hashlib.sha256(canonical_line({
        "base_weights_sha256": base_sha256, "derivation": dict(profile.derivation),
        "isa": isa, "kind": profile.kind, "model_id": profile.model_id,
        "runtime": {"torch": torch_version}}).encode("utf-8")).hexdigest()


class Bf16Encoder(Encoder):
    """``bf16``: the base transformer, bfloat16 ``nn.Linear`` under CPU autocast (module
    docstring), batched by :data:`BATCH_TOKENS`; loaded on the first text."""

    max_batch_tokens = BATCH_TOKENS
    precision = "bf16"

    def __init__(self, profile: ModelProfile, path: Path, batch_size: int = DEFAULT_BATCH,
                 device: str = "cpu"):
        if device != "cpu":
            raise ValueError(f"{profile.model_id} runs on the CPU only (bfloat16 under CPU "
                             f"autocast); --device {device} cannot run it")
        super().__init__(profile, path, batch_size, device)
        if profile.param("linear_weights") != "bfloat16" or profile.param("autocast") != "cpu":
            raise ValueError(f"{profile.model_id}: the bf16 kind builds bfloat16 linear "
                             "weights under CPU autocast only")
        torch = heavy.load("torch")
        self.torch_version = str(torch.__version__)
        self.isa = isa_path()
        self.base_weights_sha256 = self.weights_sha256
        self.weights_sha256 = bf16_digest(profile, self.base_weights_sha256,
                                          self.torch_version, self.isa)
        self._model = None

    def _load(self):
        if self._model is None:
            torch = heavy.load("torch")
            model = load_sentence_transformer(self.profile, self.path, "cpu")
            for module in model.modules():
                if isinstance(module, torch.nn.Linear):
                    module.to(torch.bfloat16)
            model.eval()
            self._model = model
        return self._model

    def token_lengths(self, texts):
        model = self._load()
        return transformer_lengths(model.tokenizer, texts, model.max_seq_length)

    def _encode_raw(self, texts):
        torch = heavy.load("torch")
        model = self._load()
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16):
            out = model.encode(list(texts), batch_size=len(texts), show_progress_bar=False,
                               convert_to_tensor=True, normalize_embeddings=False)
        return out.float().numpy().astype(np.float32, copy=False)

    def describe(self) -> dict:
        return {**super().describe(), "base_weights_sha256": self.base_weights_sha256,
                "runtime": {"name": "torch", "torch": self.torch_version},
                "isa": self.isa, "kept_fp32": list(KEPT_FP32),
                "batching": (f"length-aware, at most {self.max_batch_tokens} padded tokens "
                             f"and {self.batch_size} texts per batch")}
