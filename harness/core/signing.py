"""Signed claims: a detached Ed25519 signature over the sha256 of every claim file.

The sha256 pins inside ``metrics.json`` tie the claim's files to each other, but anyone can
recompute them: a directory whose licence, tiers and pins were all edited consistently
checks out.  A signature adds *who*: when ``$HARNESS_SIGNING_KEY`` names an Ed25519 private
key (PEM, PKCS#8), every results directory written also gets ``signature.json``::

    {"algorithm": "Ed25519", "files": {name: sha256, ...}, "key_id": sha256 of the raw
     public key, "public_key": base64 of it, "signature": base64 of the signature over
     the canonical JSON {"files": ..., "purpose": PURPOSE}}

covering every file but ``runinfo.json`` (timings: outside the claim), the signature file
itself and dot files (the product's own marker).  Ed25519 signatures are deterministic
(RFC 8032), so a signed directory is still byte-identical across runs.  The private key is
read, used and dropped; it is never written or printed.

What a signature proves: the holder of that key wrote exactly these bytes.  What it does not
prove: that the numbers are right (the ingester still recomputes every check) or that the
key was not stolen.  An unsigned directory proves only that its files agree with each other.
:func:`verify_directory` is how the team ingester decides whether tier A may be trusted.
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from harness.core import settings
from harness.core.canonical import Parts, canonical_json, sha256_text
from harness.core.atomic import write_files
from harness.core.outputs import check_file

SIGNATURE_FILE = "signature.json"
ALGORITHM = "Ed25519"
PURPOSE = "retrieval-eval results directory: sha256 of each claim file"
#: files a signature never covers: the run record (timings, host) and the signature itself
UNSIGNED_FILES = frozenset({"runinfo.json", SIGNATURE_FILE})
#: a signature document or a keys file larger than this is not read
MAX_SIGNATURE_BYTES = 1 << 20
_PEM = re.compile(r"-----BEGIN PUBLIC KEY-----.+?-----END PUBLIC KEY-----", re.DOTALL)


def _serialization() -> Any:
    return importlib.import_module("cryptography.hazmat.primitives.serialization")


def _ed25519() -> Any:
    return importlib.import_module("cryptography.hazmat.primitives.asymmetric.ed25519")


def signed_names(names: Any) -> list[str]:
    """The names a signature covers among ``names``, sorted."""
    return sorted(n for n in names if n not in UNSIGNED_FILES and not n.startswith("."))


def message(files: Mapping[str, str]) -> bytes:
    """The bytes signed: canonical JSON of the files' sha256 and the purpose."""
    return canonical_json({"files": dict(sorted(files.items())),
                           "purpose": PURPOSE}).encode("utf-8")


def _raw_public(public_key: Any) -> bytes:
    ser = _serialization()
    raw: bytes = public_key.public_bytes(ser.Encoding.Raw, ser.PublicFormat.Raw)
    return raw


def key_id(public_key: Any) -> str:
    """sha256 (hex) of the raw 32-byte public key: how a key is named."""
    return hashlib.sha256(_raw_public(public_key)).hexdigest()


def load_private_key(path: str | os.PathLike[str]) -> Any:
    """The Ed25519 private key in the PEM file ``path``; a ValueError naming the file (never
    its contents) when it is missing, unreadable or another kind of key."""
    where = f"{settings.SIGNING_KEY}={path}"
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"{where}: cannot read the signing key ({exc.strerror})") from None
    try:
        key = _serialization().load_pem_private_key(data, password=None)
    except (ValueError, TypeError):
        raise ValueError(f"{where}: not an unencrypted PEM private key") from None
    if not isinstance(key, _ed25519().Ed25519PrivateKey):
        raise ValueError(f"{where}: not an Ed25519 key (signatures are Ed25519)")
    return key


def signature_text(files: Mapping[str, str], private_key: Any) -> str:
    """The ``signature.json`` text for ``files`` (name -> sha256) signed by ``private_key``."""
    public = private_key.public_key()
    sig: bytes = private_key.sign(message(files))
    return canonical_json({
        "algorithm": ALGORITHM, "files": dict(sorted(files.items())), "key_id": key_id(public),
        "public_key": base64.b64encode(_raw_public(public)).decode("ascii"),
        "signature": base64.b64encode(sig).decode("ascii")})


def _sha(data: str | Parts | bytes) -> str:
    return hashlib.sha256(data).hexdigest() if isinstance(data, bytes) else sha256_text(data)


def sign_texts(texts: Mapping[str, str | Parts | bytes]) -> dict[str, str]:
    """``{"signature.json": text}`` over the claim files among ``texts`` when
    ``$HARNESS_SIGNING_KEY`` is set, else ``{}`` (a directory is then written unsigned)."""
    path = settings.signing_key()
    if path is None:
        return {}
    files = {n: _sha(texts[n]) for n in signed_names(texts)}
    return {SIGNATURE_FILE: signature_text(files, load_private_key(path))}


def load_trusted_keys(path: str | os.PathLike[str]) -> dict[str, Any]:
    """``{key_id: public key}`` from a file of one or more PEM ``PUBLIC KEY`` blocks (all
    Ed25519); a ValueError naming the file and the block otherwise."""
    source = Path(path)
    try:
        if source.stat().st_size > MAX_SIGNATURE_BYTES:
            raise ValueError(f"{source}: larger than {MAX_SIGNATURE_BYTES} bytes; not a keys file")
        text = source.read_text(encoding="ascii")
    except OSError as exc:
        raise ValueError(f"{source}: cannot read the trusted keys ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ValueError(f"{source}: not a PEM file (non-ASCII bytes)") from None
    blocks = _PEM.findall(text)
    if not blocks:
        raise ValueError(f"{source}: holds no PEM 'PUBLIC KEY' block")
    keys: dict[str, Any] = {}
    for i, block in enumerate(blocks, start=1):
        try:
            key = _serialization().load_pem_public_key(block.encode("ascii"))
        except (ValueError, TypeError):
            raise ValueError(f"{source}: public key {i}: not a readable PEM public key") from None
        if not isinstance(key, _ed25519().Ed25519PublicKey):
            raise ValueError(f"{source}: public key {i}: not an Ed25519 key")
        keys[key_id(key)] = key
    return keys


@dataclass(frozen=True)
class Verdict:
    """Whether a directory's claim files carry a valid signature by a trusted key."""

    trusted: bool
    reason: str
    key_id: str | None = None


def _read_signature(path: Path) -> dict[str, Any] | str:
    """The signature document, or why it is not one."""
    try:
        if path.stat().st_size > MAX_SIGNATURE_BYTES:
            return f"{SIGNATURE_FILE}: larger than {MAX_SIGNATURE_BYTES} bytes"
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return f"{SIGNATURE_FILE}: unreadable ({exc})"
    if not isinstance(doc, dict) or doc.get("algorithm") != ALGORITHM \
            or not isinstance(doc.get("files"), dict) \
            or not all(isinstance(k, str) and isinstance(v, str) for k, v in doc["files"].items()) \
            or not all(isinstance(doc.get(f), str) for f in ("key_id", "public_key", "signature")):
        return (f"{SIGNATURE_FILE}: fields 'algorithm', 'files', 'key_id', 'public_key', "
                "'signature': not an Ed25519 signature document")
    return doc


def _listed_unchanged(folder: Path, doc: Mapping[str, Any], key: Any) -> str | None:
    """Why the signature ``doc`` does not hold for the files it lists under ``key`` (a bad
    signature, a listed file missing or changed), or None when it holds."""
    kid = doc["key_id"]
    try:
        key.verify(base64.b64decode(doc["signature"], validate=True), message(doc["files"]))
    except Exception:  # InvalidSignature, or a signature of the wrong length / encoding
        return (f"{SIGNATURE_FILE}: field 'signature': does not verify under key {kid[:16]} "
                "(the listed digests were changed)")
    for name, sha in sorted(doc["files"].items()):
        path = folder / name
        if name != Path(name).name or name.startswith(".") or name in UNSIGNED_FILES \
                or not path.is_file():
            return f"{name}: listed in {SIGNATURE_FILE} but missing"
        if hashlib.sha256(path.read_bytes()).hexdigest() != sha:
            return f"{name}: changed since it was signed (sha256 differs from {SIGNATURE_FILE})"
    return None


def extend_signature(directory: str | os.PathLike[str]) -> bool:
    """Re-sign ``directory`` after claim files were added to it (``harness intervals``
    writes intervals.json into a results directory), when ``$HARNESS_SIGNING_KEY`` is set
    and its present signature is by that same key and still holds for every file it lists:
    the key holder vouches for what it signed and for what it just added.  Anything else
    (unsigned, another key, a listed file changed) is left as it is.  True when re-signed."""
    path = settings.signing_key()
    folder = Path(directory)
    if path is None or not (folder / SIGNATURE_FILE).is_file():
        return False
    key = load_private_key(path)
    doc = _read_signature(folder / SIGNATURE_FILE)
    if isinstance(doc, str) or doc["key_id"] != key_id(key.public_key()) \
            or _listed_unchanged(folder, doc, key.public_key()) is not None:
        return False
    present = signed_names(p.name for p in folder.iterdir() if p.is_file())
    files = {n: hashlib.sha256((folder / n).read_bytes()).hexdigest() for n in present}
    target = check_file(folder / SIGNATURE_FILE,
                        recognise=lambda p: not isinstance(_read_signature(p), str),
                        what="signature", flag="results directory")
    write_files([(target, signature_text(files, key))])
    return True


def verify_directory(directory: str | os.PathLike[str], trusted: Mapping[str, Any]) -> Verdict:
    """Is every claim file of ``directory`` signed, unchanged, by a key in ``trusted``?

    Trusted only when the signature verifies under a listed key, every file it lists is
    there with that sha256, and it lists every claim file present (a file added after
    signing is not vouched for)."""
    folder = Path(directory)
    sig_path = folder / SIGNATURE_FILE
    if not sig_path.is_file():
        return Verdict(False, f"unsigned: no {SIGNATURE_FILE}")
    doc = _read_signature(sig_path)
    if isinstance(doc, str):
        return Verdict(False, doc)
    kid = doc["key_id"]
    key = trusted.get(kid)
    if key is None:
        return Verdict(False, f"{SIGNATURE_FILE}: signed by key {kid[:16]}, which is not "
                              "among the trusted keys", kid)
    broken = _listed_unchanged(folder, doc, key)
    if broken is not None:
        return Verdict(False, broken, kid)
    present = signed_names(p.name for p in folder.iterdir() if p.is_file())
    for name in present:
        if name not in doc["files"]:
            return Verdict(False, f"{name}: not covered by {SIGNATURE_FILE} (added after "
                                  "signing)", kid)
    return Verdict(True, f"signed by trusted key {kid[:16]}", kid)
