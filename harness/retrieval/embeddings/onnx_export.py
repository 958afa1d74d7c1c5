"""ONNX exports of a packaged transformer, derived offline once per machine and user.

Two steps from the base profile's weights, each recorded in the export's
``derivation.json``:

* ``precision: fp32`` (``minilm-onnx``): the transformer (``last_hidden_state``) exported
  with torch's TorchScript exporter (opset :data:`OPSET`, dynamic batch and sequence axes),
  then fused offline by ONNX Runtime's transformer optimiser (``model_type="bert"``: embedding
  layer-norm, attention, skip layer-norm and bias-GELU fused into single kernels).  Pooling
  and normalisation stay outside the graph, as in the base model.
* ``precision: int8`` (``minilm-onnx-int8``): the fp32 export quantised dynamically
  (``onnxruntime.quantization.quantize_dynamic``): weights int8 per output channel,
  activations quantised per tensor at run time (Jacob et al. 2018, "Quantization and
  Training of Neural Networks for Efficient Integer-Arithmetic-Only Inference", CVPR).
  Its source is the fp32 export named by ``quantize_from``, built first if absent.

An export lives in the per-user models directory (:func:`harness.core.settings.models_dir`)
under ``<model_id>-<key>``, the key hashing the base weights, the derivation, the recipe
version and the torch / onnx / onnxruntime versions, so a change to any of them builds a new
export and never reuses an old one.  :func:`harness.retrieval.embeddings.once.build_once`
makes two concurrent processes build it once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sys
import warnings
from pathlib import Path

from harness.core import heavy, settings
from harness.core.canonical import canonical_line, sha256_file
from harness.retrieval.embeddings.encoders import offline_transformers, weights_sha256
from harness.retrieval.embeddings.once import build_once
from harness.retrieval.embeddings.profiles import PROFILES, ModelProfile, source_path

#: bump when the export recipe changes (part of every export's key)
RECIPE = 1
OPSET = 17
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
MODEL_FILE = "model.onnx"
RECORD_FILE = "derivation.json"
TOKENIZER_FILE = "tokenizer.json"


def runtime_versions() -> dict[str, str]:
    """The versions an export depends on (exporter, format, runtime)."""
    return {"onnx": heavy.load("onnx").__version__,
            "onnxruntime": heavy.load("onnxruntime").__version__,
            "torch": heavy.load("torch").__version__}


def _base(profile: ModelProfile) -> ModelProfile:
    if profile.kind != "onnx" or profile.base not in PROFILES:
        raise ValueError(f"{profile.model_id} is not an ONNX profile with a known base")
    base = PROFILES[profile.base]
    if base.kind != "sentence-transformers":
        raise ValueError(f"{profile.model_id}: base {base.model_id} is not a transformer")
    return base


def export_key(profile: ModelProfile, base_sha256: str, versions: dict[str, str]) -> str:
    """sha256 naming one export: base weights, derivation, recipe and library versions."""
    return hashlib.sha256(canonical_line({
        "base": profile.base, "base_weights_sha256": base_sha256,
        "derivation": dict(profile.derivation), "max_seq_length": profile.max_seq_length,
        "model_id": profile.model_id, "recipe": RECIPE, "versions": versions,
    }).encode("utf-8")).hexdigest()


def export_dir(profile: ModelProfile, models_dir=None) -> Path:
    """Where ``profile``'s export lives (whether or not it is built yet)."""
    base_sha = weights_sha256(source_path(_base(profile).source))
    key = export_key(profile, base_sha, runtime_versions())
    return Path(models_dir or settings.models_dir()) / f"{profile.model_id}-{key[:16]}"


def _complete(path: Path) -> bool:
    return (path / MODEL_FILE).is_file() and (path / RECORD_FILE).is_file()


def read_record(path: Path) -> dict:
    """An export's ``derivation.json``."""
    return json.loads((Path(path) / RECORD_FILE).read_text(encoding="utf-8"))


def _export_fp32(base_path: Path, out: Path) -> None:
    torch = heavy.load("torch")
    offline_transformers()
    transformers = heavy.load("transformers")
    optimizer = heavy.load("onnxruntime.transformers.optimizer")

    bert = transformers.AutoModel.from_pretrained(str(base_path), attn_implementation="eager",
                                                  local_files_only=True).eval()
    config = bert.config

    class Hidden(torch.nn.Module):
        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(input_ids=input_ids, attention_mask=attention_mask,
                              token_type_ids=token_type_ids).last_hidden_state

    ids = torch.full((2, 16), 1000, dtype=torch.long)
    mask = torch.ones_like(ids)
    mask[1, 10:] = 0
    raw = out / "raw.onnx"
    axes = {name: {0: "batch", 1: "sequence"} for name in (*INPUTS, "last_hidden_state")}
    with torch.no_grad():
        torch.onnx.export(Hidden(bert), (ids, mask, torch.zeros_like(ids)), str(raw),
                          input_names=list(INPUTS), output_names=["last_hidden_state"],
                          dynamic_axes=axes, opset_version=OPSET, dynamo=False,
                          do_constant_folding=True)
    fused = optimizer.optimize_model(str(raw), model_type="bert",
                                     num_heads=int(config.num_attention_heads),
                                     hidden_size=int(config.hidden_size), opt_level=0,
                                     use_gpu=False)
    fused.save_model_to_file(str(out / MODEL_FILE))
    raw.unlink()


def _quantize(source: Path, out: Path, profile: ModelProfile) -> None:
    onnx = heavy.load("onnx")
    quantization = heavy.load("onnxruntime.quantization")

    if profile.param("weight_type") != "qint8":
        raise ValueError(f"{profile.model_id}: only weight_type 'qint8' is supported")
    quantization.quantize_dynamic(
        str(source / MODEL_FILE), str(out / MODEL_FILE),
        weight_type=quantization.QuantType.QInt8,
        per_channel=bool(profile.param("per_channel")), reduce_range=False,
        extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def ensure_export(profile: ModelProfile, models_dir=None) -> Path:
    """The directory of ``profile``'s export, building it first when absent (once per
    machine: about a minute on two cores; module docstring)."""
    base = _base(profile)
    base_path = source_path(base.source)
    target = export_dir(profile, models_dir)
    if _complete(target):
        return target
    precision = profile.param("precision")
    source = None
    if precision == "int8":
        source = ensure_export(PROFILES[str(profile.param("quantize_from"))], models_dir)
    elif precision != "fp32":
        raise ValueError(f"{profile.model_id}: unknown precision {precision!r}")

    def build(tmp: Path) -> None:
        print(f"exporting {profile.model_id} from {base.model_id} to ONNX ({precision}; "
              f"once per machine, kept in {target.parent})", file=sys.stderr, flush=True)
        root = logging.getLogger()
        level = root.level
        root.setLevel(logging.ERROR)  # the exporter's and quantiser's advice is noise here
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                if source is None:
                    _export_fp32(base_path, tmp)
                else:
                    _quantize(source, tmp, profile)
        finally:
            root.setLevel(level)
        record = {
            "model_id": profile.model_id, "base": base.model_id,
            "base_weights_sha256": weights_sha256(base_path),
            "tokenizer_sha256": sha256_file(base_path / TOKENIZER_FILE),
            "derivation": dict(profile.derivation), "recipe": RECIPE, "opset": OPSET,
            "exporter": "torch.onnx.export (TorchScript, dynamo=False)",
            "fusion": "onnxruntime.transformers.optimizer model_type=bert opt_level=0",
            "quantized_from": None if source is None else read_record(source)["onnx_sha256"],
            "versions": runtime_versions(),
            "onnx_sha256": sha256_file(tmp / MODEL_FILE),
        }
        (tmp / RECORD_FILE).write_text(canonical_line(record) + "\n", encoding="utf-8")

    build_once(target, _complete, build)
    return target
