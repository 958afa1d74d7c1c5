"""The encoder of an ``onnx`` profile: the base transformer's export run by ONNX Runtime.

The export (:mod:`harness.retrieval.embeddings.onnx_export`) holds the transformer up to its
last hidden state; tokenisation is the base model's own tokenizer (truncation at the
profile's ``max_seq_length``) and pooling is the base's mean over the attention mask, then
L2 normalisation (:class:`~harness.retrieval.embeddings.encoders.Encoder`).  The session runs
on the CPU with every graph optimisation, in a fixed thread setting, its idle threads
sleeping rather than spinning.

fp32 rows do not depend on the rest of their batch (padded positions are masked out of
attention and pooling), so the fp32 profile batches by length.  Dynamic int8 quantisation
computes one activation scale per tensor, i.e. over the whole padded batch, so an int8
vector would depend on which texts shared its batch (measured: cosine down to 0.98 against
the same text alone); the int8 profile therefore encodes one text per run, and a text's
vector is the same whatever else is embedded with it (the embedding cache relies on it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.core import heavy
from harness.retrieval.embeddings.encoders import (Encoder, offline_transformers,
                                                   transformer_lengths, weights_sha256)
from harness.retrieval.embeddings.onnx_export import (INPUTS, MODEL_FILE, ensure_export,
                                                      read_record)
from harness.retrieval.embeddings.profiles import PROFILES, ModelProfile, source_path

#: threads of one session (the machines this product targets have two cores)
INTRA_OP_THREADS = 2


class OnnxEncoder(Encoder):
    """``onnx``: mean-pooled last hidden states of the exported transformer."""

    runtime = "onnxruntime"

    def __init__(self, profile: ModelProfile, path: Path, batch_size: int = 32,
                 models_dir=None, device: str = "cpu"):
        if device != "cpu":
            raise ValueError(f"{profile.model_id} runs on the CPU only (ONNX Runtime's CPU "
                             f"provider); --device {device} cannot run it")
        self.precision = str(profile.param("precision"))
        base = PROFILES[str(profile.base)]
        self.base_path = source_path(base.source)
        self.export = ensure_export(profile, models_dir)
        super().__init__(profile, self.export, batch_size, device)
        self.batch_independent = profile.param("precision") == "fp32"
        if not self.batch_independent:
            self.batch_size = 1
        self.base_weights_sha256 = weights_sha256(self.base_path)
        self.record = read_record(self.export)
        if self.record.get("onnx_sha256") != self.weights_sha256:
            raise ValueError(f"embedding model {profile.model_id}: the export in "
                             f"{self.export} does not match its derivation record; delete "
                             "the directory to export again")
        offline_transformers()
        self.tokenizer = heavy.load("transformers").AutoTokenizer.from_pretrained(
            str(self.base_path), local_files_only=True)
        self._session = None

    @property
    def session(self):
        if self._session is None:
            ort = heavy.load("onnxruntime")
            options = ort.SessionOptions()
            options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
            options.intra_op_num_threads = INTRA_OP_THREADS
            options.inter_op_num_threads = 1
            options.log_severity_level = 3
            # idle threads sleep instead of spinning: on a shared machine a spinning pool
            # takes the cores from the next step (and from everyone else)
            options.add_session_config_entry("session.intra_op.allow_spinning", "0")
            options.add_session_config_entry("session.inter_op.allow_spinning", "0")
            self._session = ort.InferenceSession(str(self.export / MODEL_FILE), options,
                                                 providers=["CPUExecutionProvider"])
        return self._session

    def token_lengths(self, texts):
        return transformer_lengths(self.tokenizer, texts, self.profile.max_seq_length)

    def _encode_raw(self, texts):
        batch = self.tokenizer(list(texts), padding=True, truncation=True,
                               max_length=self.profile.max_seq_length, return_tensors="np")
        feed = {name: np.asarray(batch[name], dtype=np.int64) for name in INPUTS}
        hidden = self.session.run(None, feed)[0]
        if hidden.shape[-1] != self.dimension:
            raise ValueError(f"embedding model {self.model_id}: declared dimension "
                             f"{self.dimension} but the export produces {hidden.shape[-1]}")
        mask = feed["attention_mask"][..., None].astype(np.float32)
        return (hidden * mask).sum(axis=1) / np.clip(mask.sum(axis=1), 1e-9, None)

    def describe(self) -> dict:
        record = self.record
        return {**super().describe(), "base_weights_sha256": self.base_weights_sha256,
                "runtime": {"name": "onnxruntime", **record["versions"]},
                "export": {key: record[key] for key in (
                    "recipe", "opset", "exporter", "fusion", "quantized_from",
                    "tokenizer_sha256", "onnx_sha256")},
                "batching": "length-aware" if self.batch_independent
                            else "one text per run (int8 activation scales are per batch)"}
