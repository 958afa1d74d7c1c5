"""Certificates per machine: migration claims that found a cheaper profile a drop-in.

``harness migrate`` whose decision is ``equivalent_drop_in`` keeps a certificate in the
store (``--certificates DIR``, default ``certificates/`` in the cache directory), under the
capability of the machine the NEW model ran on
(:func:`harness.retrieval.embeddings.devices.machine_key`: ``cpu-amx``,
``cpu-avx512-bf16``, ``cuda-nvidia-h200``, ...): one JSON file per pair holding the claim
itself (``migration.json``'s bytes), its sha256 (the certificate's name in every claim that
relies on it), both models' labels, and the texts/s each model reached there.

A certificate is read back only for the machine it names: a bfloat16 profile certified on an
AMX CPU runs other kernels (other roundings, another speed) on an AVX2 one, so it is not
taken as certified there.  Every file is checked, never trusted: its claim must hash to its
digest, decide ``equivalent_drop_in``, name the pair the file names, and its machine must be
the directory's.  A file failing a check is skipped with a warning naming it.

Uses: ``harness bench --model minilm`` says once which cheaper profile is certified for
this machine and how much faster it ran (:func:`offer_line`; it never switches by itself);
``--precision certified`` runs it and the claim names the profile and the certificate
(:func:`choose`); an index whose vectors come from two models is accepted when a
certificate pairs their labels (:func:`equivalent_pairs`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass
from pathlib import Path

from harness.retrieval.embeddings.devices import machine_key

log = logging.getLogger(__name__)

KIND = "harness.embedding_certificate"
STORE_DIR = "certificates"
DROP_IN = "equivalent_drop_in"
#: profile kinds that are cheaper arithmetic of the same model (what bench may offer)
CHEAPER_KINDS = ("bf16", "fp16", "onnx")


def default_store(cache_dir) -> Path:
    return Path(cache_dir) / STORE_DIR


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", name).strip("-")


@dataclass(frozen=True)
class Certificate:
    old: str
    new: str
    old_label: str
    new_label: str
    machine: str
    sha256: str
    #: texts/s of OLD and NEW on this machine when certified (None: not measured)
    old_rate: float | None
    new_rate: float | None
    path: Path

    @property
    def speedup(self) -> float | None:
        if not self.old_rate or not self.new_rate:
            return None
        return self.new_rate / self.old_rate

    def claim_block(self) -> dict:
        """What a claim relying on this certificate records."""
        return {"profile": self.new, "replaces": self.old, "certificate_sha256": self.sha256,
                "machine": self.machine, "decision": DROP_IN}


def record(store, claim_bytes: bytes, doc: dict, machine: dict,
           rates: dict | None = None) -> Path | None:
    """Keep ``doc`` (the migration claim whose file holds ``claim_bytes``) as a certificate
    for ``machine`` when it decides ``equivalent_drop_in``; returns the file (None when the
    decision is another).  ``rates``: ``{"old": texts/s, "new": texts/s}``."""
    if doc.get("decision", {}).get("decision") != DROP_IN:
        return None
    models = doc["models"]
    key = machine_key(machine)
    entry = {
        "kind": KIND, "machine": key, "capability": machine,
        "old": models["old"]["model_id"], "new": models["new"]["model_id"],
        "old_label": models["old"]["label"], "new_label": models["new"]["label"],
        "certificate_sha256": hashlib.sha256(claim_bytes).hexdigest(),
        "texts_per_second": dict(rates or {}),
        "claim": claim_bytes.decode("utf-8"),
    }
    folder = Path(store) / key
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_slug(entry['old'])}--{_slug(entry['new'])}.json"
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_text(json.dumps(entry, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _read(path: Path, key: str | None) -> Certificate | None:
    """The certificate in ``path`` when every check passes (module docstring), else None."""
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
        claim_text = entry["claim"]
        digest = hashlib.sha256(claim_text.encode("utf-8")).hexdigest()
        claim = json.loads(claim_text)
        problems = []
        if entry.get("kind") != KIND:
            problems.append(f"kind is {entry.get('kind')!r}")
        if digest != entry["certificate_sha256"]:
            problems.append("its claim does not hash to certificate_sha256")
        if claim.get("decision", {}).get("decision") != DROP_IN:
            problems.append("its claim does not decide equivalent_drop_in")
        models = claim.get("models", {})
        if (models.get("old", {}).get("label"), models.get("new", {}).get("label")) != (
                entry["old_label"], entry["new_label"]):
            problems.append("its claim names other models")
        if entry["machine"] != path.parent.name or (key is not None and entry["machine"] != key):
            problems.append(f"it was certified on {entry['machine']}, not {key or path.parent.name}")
        rates = entry.get("texts_per_second") or {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("certificate %s skipped: unreadable (%s)", path, exc)
        return None
    if problems:
        log.warning("certificate %s skipped: %s", path, "; ".join(problems))
        return None
    return Certificate(entry["old"], entry["new"], entry["old_label"], entry["new_label"],
                       entry["machine"], digest, rates.get("old"), rates.get("new"), path)


def certified_for(store, model_id: str, machine: dict) -> list[Certificate]:
    """Certificates of drop-ins for ``model_id`` on ``machine`` (its capability), fastest
    first."""
    key = machine_key(machine)
    folder = Path(store) / key
    if not folder.is_dir():
        return []
    found = [c for c in (_read(p, key) for p in sorted(folder.glob("*.json")))
             if c is not None and c.old == model_id]
    return sorted(found, key=lambda c: (-(c.speedup or 0.0), c.new))


def equivalent_pairs(store) -> dict[frozenset, Certificate]:
    """Every checked certificate in the store, by the pair of labels it makes equivalent."""
    out: dict[frozenset, Certificate] = {}
    root = Path(store)
    if not root.is_dir():
        return out
    for path in sorted(root.glob("*/*.json")):
        cert = _read(path, None)
        if cert is not None:
            out.setdefault(frozenset((cert.old_label, cert.new_label)), cert)
    return out


def _cheaper(cert: Certificate) -> bool:
    from harness.retrieval.embeddings.profiles import PROFILES

    profile = PROFILES.get(cert.new)
    return (profile is not None and profile.kind in CHEAPER_KINDS
            and (cert.speedup or 0.0) > 1.0)


def offers(store, model_id: str, machines: list[dict]) -> list[Certificate]:
    """Cheaper profiles certified for ``model_id`` on any of ``machines``, fastest first."""
    found = [c for m in machines for c in certified_for(store, model_id, m) if _cheaper(c)]
    return sorted(found, key=lambda c: (-(c.speedup or 0.0), c.new))


def offer_line(cert: Certificate, model_id: str) -> str:
    """The one line ``harness bench`` prints about a certified cheaper profile."""
    return (f"note: {cert.new} is certified a drop-in for {model_id} on this machine "
            f"({cert.machine}; certificate sha256:{cert.sha256[:12]}) and ran "
            f"{cert.speedup:.1f}x faster there ({cert.new_rate:.0f} vs {cert.old_rate:.0f} "
            f"texts/s); this run uses {model_id} as asked: --precision certified opts in")


def machines_here(device: str | None) -> list[dict]:
    """The capabilities a run with ``--device`` could use here: the CPU's, and the first
    CUDA device's when torch sees one (and the device allows it)."""
    from harness.retrieval.embeddings import devices

    spec = devices.parse_device(device)
    out = []
    if spec in ("auto", "cpu"):
        out.append(devices.capability("cpu"))
    if spec != "cpu" and devices.cuda_devices():
        out.append(devices.capability("cuda:0" if spec == "auto" else spec))
    return out


def choose(store, model_id: str, device: str | None) -> Certificate:
    """``--precision certified``: the fastest cheaper profile certified for ``model_id``
    here; a clear error (exit 2) when there is none."""
    machines = machines_here(device)
    found = offers(store, model_id, machines)
    if not found:
        keys = ", ".join(machine_key(m) for m in machines) or "none"
        raise ValueError(f"--precision certified: no cheaper profile is certified a drop-in "
                         f"for {model_id} on this machine ({keys}) in {store}; certify one "
                         f"with: python -m harness migrate --old {model_id} --new "
                         "minilm-bf16 --corpus KIND:PATH --out DIR")
    return found[0]


def note_offer(store, model_id: str, device: str | None) -> str | None:
    """The :func:`offer_line` for the fastest cheaper profile certified for ``model_id``
    here, or None (also when the store does not exist: nothing is probed then)."""
    if not Path(store).is_dir():
        return None
    found = offers(store, model_id, machines_here(device))
    return offer_line(found[0], model_id) if found else None
