"""Where an encoder runs, and what the machine it runs on can do.

``--device auto|cpu|cuda[:N]`` (:func:`resolve_device`): ``auto`` is the first CUDA device
when torch sees one and the model's kind runs there, else the CPU; a CUDA device asked for
but absent, or a device the model's kind cannot run on, is refused (:class:`DeviceUnavailable`,
a bad-input error: exit 2) before anything is loaded.

The *capability* (:func:`capability`) names the arithmetic a model's vectors come from:
on the CPU its ISA path (``amx``, ``avx512-bf16``, ``avx512``, ``avx2``, ``baseline``: the
widest instruction set torch's kernels select there), on a CUDA device the device's name.
A migration certificate belongs to one capability
(:mod:`harness.retrieval.embeddings.certified`): a cheaper profile certified on an AMX
machine is not certified on an AVX2 one, where its kernels differ and it may be slower.
Tests fake a machine by replacing :func:`capability`.
"""

from __future__ import annotations

import re

from harness.core import heavy

#: what ``--device`` accepts
DEVICE_PATTERN = re.compile(r"^(auto|cpu|cuda(:\d+)?)$")
DEVICE_HELP = ("where torch encoders run: auto (the first CUDA device when torch sees one, "
               "else the CPU; default), cpu, cuda or cuda:N (refused when absent)")

#: the devices each encoder kind runs on (kinds: harness.retrieval.embeddings.models)
KIND_DEVICES: dict[str, tuple[str, ...]] = {
    "sentence-transformers": ("cpu", "cuda"),
    "repooled": ("cpu", "cuda"),
    "rotated": ("cpu", "cuda"),
    "truncated": ("cpu", "cuda"),
    "bf16": ("cpu",),
    "fp16": ("cuda",),
    "onnx": ("cpu",),
    "model2vec": ("cpu",),
    "distilled": ("cpu",),
}


class DeviceUnavailable(ValueError):
    """The device asked for is not there, or the model cannot run on it."""


def parse_device(spec: str | None) -> str:
    """``spec`` checked and normalised (``None`` -> ``auto``, ``cuda`` -> ``cuda:0``)."""
    spec = "auto" if spec is None else str(spec).strip().lower()
    if not DEVICE_PATTERN.match(spec):
        raise DeviceUnavailable(f"--device {spec!r}: expected auto, cpu, cuda or cuda:N")
    return "cuda:0" if spec == "cuda" else spec


def cuda_devices() -> int:
    """CUDA devices torch sees (0 without a GPU or with a CPU-only torch build)."""
    torch = heavy.load("torch")
    try:
        return int(torch.cuda.device_count()) if torch.cuda.is_available() else 0
    except (RuntimeError, AssertionError):  # a driver that cannot initialise sees none
        return 0


def resolve_device(spec: str | None, kind: str = "sentence-transformers",
                   model: str = "the model") -> str:
    """The device ``spec`` means for a model of ``kind``: ``cpu`` or ``cuda:N``."""
    spec = parse_device(spec)
    supported = KIND_DEVICES.get(kind, ("cpu",))
    if spec == "cpu":
        if "cpu" not in supported:
            raise DeviceUnavailable(f"{model} runs on a CUDA device only (kind {kind}); "
                                    "--device cpu cannot run it")
        return "cpu"
    if spec == "auto" and "cuda" not in supported:
        return "cpu"
    if spec != "auto" and "cuda" not in supported:
        raise DeviceUnavailable(f"{model} runs on the CPU only (kind {kind}); --device "
                                f"{spec} cannot run it (use --device cpu or auto)")
    count = cuda_devices()
    if spec == "auto":
        if count:
            return "cuda:0"
        if "cpu" in supported:
            return "cpu"
        raise DeviceUnavailable(f"{model} runs on a CUDA device only (kind {kind}), and torch "
                                "sees no CUDA device here")
    index = int(spec.split(":", 1)[1])
    if index >= count:
        seen = "no CUDA device" if count == 0 else f"{count} CUDA device(s) (cuda:0..cuda:{count - 1})"
        raise DeviceUnavailable(f"--device {spec} for {model}: torch sees {seen} on this "
                                "machine")
    return spec


def cpu_isa_path() -> str:
    """The widest CPU path torch's kernels take here: ``amx`` (AMX tiles), ``avx512-bf16``,
    ``avx512``, ``avx2`` or ``baseline``."""
    torch = heavy.load("torch")
    cpu = torch.cpu
    if bool(cpu._is_amx_tile_supported()):
        return "amx"
    capability_name = str(torch.backends.cpu.get_cpu_capability()).lower()
    if capability_name.startswith("avx512"):
        return "avx512-bf16" if bool(cpu._is_avx512_bf16_supported()) else "avx512"
    if capability_name.startswith("avx2"):
        return "avx2"
    return "baseline"


def capability(device: str) -> dict:
    """What the vectors computed on ``device`` (``cpu`` / ``cuda:N``) depend on: the
    device kind and its path (the CPU's ISA path, or the CUDA device's name)."""
    if device == "cpu":
        return {"device": "cpu", "path": cpu_isa_path()}
    torch = heavy.load("torch")
    index = int(device.split(":", 1)[1]) if ":" in device else 0
    major, minor = torch.cuda.get_device_capability(index)
    return {"device": "cuda", "path": str(torch.cuda.get_device_name(index)),
            "compute_capability": f"{major}.{minor}"}


def machine_key(cap: dict) -> str:
    """The directory name a capability's certificates live under, e.g. ``cpu-amx``,
    ``cuda-nvidia-h200``."""
    slug = re.sub(r"[^a-z0-9]+", "-", str(cap["path"]).lower()).strip("-") or "unknown"
    return f"{cap['device']}-{slug}"


def runtime_versions(device: str) -> dict:
    """torch's version, and CUDA's on a CUDA device (part of a CUDA model's digest)."""
    torch = heavy.load("torch")
    out = {"torch": str(torch.__version__)}
    if device != "cpu":
        out["cuda"] = str(torch.version.cuda)
    return out
