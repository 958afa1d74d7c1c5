"""Keys for the signed-claims tests: a trusted CI key and a forger's, as PEM files."""

from __future__ import annotations

from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519


def write_private(path: Path) -> ed25519.Ed25519PrivateKey:
    key = ed25519.Ed25519PrivateKey.generate()
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return key


def write_public(path: Path, *keys) -> Path:
    path.write_bytes(b"".join(k.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        for k in keys))
    return path


def keys(root: Path) -> tuple[Path, Path, Path]:
    """``(ci private key, forger private key, trusted public keys file)``."""
    ci = write_private(root / "ci.pem")
    write_private(root / "forger.pem")
    return root / "ci.pem", root / "forger.pem", write_public(root / "trusted.pem", ci)
