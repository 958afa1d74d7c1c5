"""The shared store submissions travel through: a shared directory or an S3-compatible bucket.

One small interface (:class:`Store`) with two implementations, chosen by URL
(:func:`open_store`):

* ``file:///path`` or a plain path: :class:`DirectoryStore`; a key is a relative path, a
  put writes a temporary file and links it into place (``os.link`` fails when the name
  exists, so two writers of one key cannot both win);
* ``s3://bucket/prefix``: :class:`S3Store` through boto3 (credentials and endpoint from the
  standard AWS variables, or ``endpoint_url``); a put is ``PutObject`` with
  ``If-None-Match: *``, which the store refuses (412) when the key exists.

Keys are ``/``-separated, never absolute, never ``..``; a directory store follows no link
(:class:`LinkRefused`).  Objects are immutable: there is
put-if-absent and delete (for leases), no overwrite.  Every read is bounded
(:data:`MAX_OBJECT_BYTES` unless the caller says less): the store is a remote party.
A store that cannot be reached raises :class:`StoreUnreachable` naming the URL.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import stat
import secrets
import time
from pathlib import Path
from typing import Any, Iterator, Protocol
from urllib.parse import unquote, urlparse

#: the largest object read from a store unless a smaller limit is given
MAX_OBJECT_BYTES = 1 << 30
#: the most keys one listing returns (a listing is a remote answer too)
MAX_LISTED_KEYS = 1_000_000
#: the pieces an object is read in
CHUNK_BYTES = 1 << 20
#: seconds an S3 read may take in all (request and every piece of the answer)
GET_DEADLINE = 600.0


class StoreError(Exception):
    """A store operation failed for a reason that is not the caller's input."""


class StoreUnreachable(StoreError):
    """The store did not answer (connection refused, timed out, DNS, credentials)."""


class ObjectTooLarge(StoreError, ValueError):
    """An object larger than the reader allows."""


class LinkRefused(StoreError, ValueError):
    """A directory store's key that is a symbolic link or leads outside the store."""


def check_key(key: str) -> str:
    """``key`` if it is a relative ``/``-separated name without ``.``/``..`` parts."""
    parts = key.split("/")
    if not key or key.startswith("/") or any(p in ("", ".", "..") for p in parts) \
            or "\\" in key or "\x00" in key:
        raise ValueError(f"not a store key: {key!r}")
    return key


class Store(Protocol):
    """What the submitters and the ingester need of a shared store."""

    url: str

    def list(self, prefix: str) -> list[str]:
        """Every key under ``prefix`` (a key prefix, not a directory), sorted."""

    def get(self, key: str, max_bytes: int = MAX_OBJECT_BYTES) -> bytes:
        """The object's bytes; :class:`KeyError` when absent; :class:`ObjectTooLarge`
        beyond ``max_bytes``."""

    def chunks(self, key: str, max_bytes: int = MAX_OBJECT_BYTES) -> Iterator[bytes]:
        """The object's bytes in pieces of at most :data:`CHUNK_BYTES` (as ``get``, for
        objects too large to hold whole)."""

    def put_if_absent(self, key: str, data: bytes) -> bool:
        """Store ``data`` under ``key`` unless the key exists: True when this call wrote it."""

    def delete(self, key: str) -> None:
        """Remove ``key`` (nothing when absent)."""


class DirectoryStore:
    """A store in a directory (local, or a shared file system that honours ``link``)."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        self.url = f"file://{self.root.absolute()}"

    def _path(self, key: str) -> Path:
        """The key's path, refused when a link takes it outside the store's root."""
        path = self.root.joinpath(*check_key(key).split("/"))
        root = self.root.resolve()
        resolved = path.resolve()
        if resolved != root and root not in resolved.parents:
            raise LinkRefused(f"store {self.url}: {key} leads outside the store (a link)")
        return path

    def _reachable(self) -> None:
        if not self.root.is_dir():
            raise StoreUnreachable(f"store {self.url}: no such directory")

    def list(self, prefix: str) -> list[str]:
        self._reachable()
        found: list[str] = []
        base = self.root
        # walk from the prefix's own directory, never the whole store
        folder_part = prefix.rsplit("/", 1)[0] if "/" in prefix else ""
        start = self._path(folder_part) if folder_part else base
        if not start.is_dir():
            return []
        for folder, dirs, files in os.walk(start):
            dirs[:] = [d for d in dirs if not d.startswith(".tmp-")]
            rel = Path(folder).relative_to(base)
            for name in files:
                if name.startswith(".tmp-"):
                    continue
                key = "/".join((*rel.parts, name))
                if key.startswith(prefix):
                    found.append(key)
                    if len(found) > MAX_LISTED_KEYS:
                        raise StoreError(f"store {self.url}: more than {MAX_LISTED_KEYS} keys "
                                         f"under {prefix!r}")
        return sorted(found)

    def get(self, key: str, max_bytes: int = MAX_OBJECT_BYTES) -> bytes:
        return b"".join(self.chunks(key, max_bytes))

    def chunks(self, key: str, max_bytes: int = MAX_OBJECT_BYTES) -> Iterator[bytes]:
        self._reachable()
        path = self._path(key)
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise KeyError(key) from None
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # the key itself is a link: never followed
                raise LinkRefused(f"store {self.url}: {key} is a link") from None
            raise
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise KeyError(key)
            total = 0
            while piece := handle.read(min(CHUNK_BYTES, max_bytes + 1 - total)):
                total += len(piece)
                if total > max_bytes:
                    raise ObjectTooLarge(f"store {self.url}: {key} is larger than "
                                         f"{max_bytes} bytes")
                yield piece

    def put_if_absent(self, key: str, data: bytes) -> bool:
        self._reachable()
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.parent / f".tmp-{os.getpid()}-{secrets.token_hex(6)}"
        try:
            with tmp.open("xb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(tmp, path)  # atomic, and refused when the name exists
            except FileExistsError:
                return False
            return True
        finally:
            tmp.unlink(missing_ok=True)

    def delete(self, key: str) -> None:
        self._reachable()
        self._path(key).unlink(missing_ok=True)


class S3Store:
    """A store under ``prefix`` in an S3 bucket (any S3-compatible server)."""

    def __init__(self, bucket: str, prefix: str = "", *, endpoint_url: str | None = None,
                 client: Any = None, deadline: float = GET_DEADLINE):
        self.bucket = bucket
        self.deadline = deadline
        self.prefix = prefix.strip("/")
        self.url = f"s3://{bucket}/{self.prefix}" if self.prefix else f"s3://{bucket}"
        self.endpoint_url = endpoint_url
        self._client = client

    # boto3 is imported on first use (importlib: it has no type information)
    def _boto(self) -> tuple[Any, Any]:
        botocore = importlib.import_module("botocore.exceptions")
        if self._client is None:
            boto3 = importlib.import_module("boto3")
            config = importlib.import_module("botocore.config").Config(
                connect_timeout=5, read_timeout=min(30.0, self.deadline), retries={"max_attempts": 3,
                                                             "mode": "standard"})
            self._client = boto3.client("s3", endpoint_url=self.endpoint_url, config=config)
        return self._client, botocore

    def _key(self, key: str) -> str:
        check_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def _call(self, what: str, fn: Any, **kwargs: Any) -> Any:
        client, errors = self._boto()
        unreachable = (errors.EndpointConnectionError, errors.ConnectTimeoutError,
                       errors.ReadTimeoutError, errors.NoCredentialsError,
                       errors.ConnectionClosedError)
        try:
            return fn(client, **kwargs)
        except unreachable as exc:
            raise StoreUnreachable(f"store {self.url}: {what}: {exc}") from None
        except errors.ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in ("NoSuchKey", "404", "NotFound"):
                raise KeyError(kwargs.get("Key", "")) from None
            if code in ("PreconditionFailed", "412", "ConditionalRequestConflict", "409"):
                raise FileExistsError(kwargs.get("Key", "")) from None
            if code in ("NoSuchBucket", "AccessDenied", "InvalidAccessKeyId",
                        "SignatureDoesNotMatch"):
                raise StoreUnreachable(f"store {self.url}: {what}: {code}") from None
            raise StoreError(f"store {self.url}: {what}: {code or exc}") from None
        except errors.BotoCoreError as exc:
            raise StoreUnreachable(f"store {self.url}: {what}: {exc}") from None

    def list(self, prefix: str) -> list[str]:
        if prefix.rstrip("/"):
            check_key(prefix.rstrip("/"))
        full = (f"{self.prefix}/" if self.prefix else "") + prefix
        strip = len(self.prefix) + 1 if self.prefix else 0
        found: list[str] = []

        def page(client: Any, **kwargs: Any) -> Any:
            return client.list_objects_v2(**kwargs)

        token = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": self.bucket, "Prefix": full}
            if token:
                kwargs["ContinuationToken"] = token
            answer = self._call("list", page, **kwargs)
            found.extend(item["Key"][strip:] for item in answer.get("Contents", []))
            if len(found) > MAX_LISTED_KEYS:
                raise StoreError(f"store {self.url}: more than {MAX_LISTED_KEYS} keys under "
                                 f"{prefix!r}")
            token = answer.get("NextContinuationToken")
            if not answer.get("IsTruncated") or not token:
                break
        return sorted(found)

    def get(self, key: str, max_bytes: int = MAX_OBJECT_BYTES) -> bytes:
        return b"".join(self.chunks(key, max_bytes))

    def chunks(self, key: str, max_bytes: int = MAX_OBJECT_BYTES) -> Iterator[bytes]:
        """As ``get``, within :attr:`deadline` seconds in all: every wait on the socket is
        cut to what is left, so a server dripping bytes is cut off at the deadline."""
        end = time.monotonic() + self.deadline
        too_large = f"store {self.url}: {key} is larger than {max_bytes} bytes"

        def left() -> float:
            remaining = end - time.monotonic()
            if remaining <= 0:
                raise StoreUnreachable(f"store {self.url}: get {key}: no complete answer "
                                       f"within {self.deadline:g} s")
            return remaining

        def request(client: Any, **kwargs: Any) -> Any:
            return client.get_object(**kwargs)

        answer = self._call(f"get {key}", request, Bucket=self.bucket, Key=self._key(key))
        body = answer["Body"]
        try:
            declared = int(answer.get("ContentLength") or 0)
            if declared > max_bytes:
                raise ObjectTooLarge(too_large)
            raw: Any = getattr(body, "_raw_stream", body)
            read = getattr(raw, "read1", body.read)  # what has arrived, not a full piece

            cut = (OSError, importlib.import_module("urllib3.exceptions").HTTPError)
            # botocore's StreamingBody.set_socket_timeout logs a traceback at ERROR before it
            # raises on an answer read to its end; the helper it calls does not
            set_timeout = importlib.import_module("botocore.compat").set_socket_timeout

            def piece(client: Any, **kwargs: Any) -> bytes:
                try:
                    with contextlib.suppress(AttributeError):  # an answer read to its end
                        set_timeout(raw, left())              # has let its socket go
                    data: bytes = read(min(CHUNK_BYTES, max_bytes + 1 - total))
                except cut as exc:  # the socket waited out what was left, or broke
                    left()
                    raise StoreUnreachable(f"store {self.url}: get {key}: {exc}") from None
                return data

            total = 0
            while True:
                data = self._call(f"get {key}", piece)
                if not data:
                    break
                total += len(data)
                if total > max_bytes:
                    raise ObjectTooLarge(too_large)
                left()
                yield data
            if declared and total != declared:
                raise StoreError(f"store {self.url}: get {key}: {total} of the {declared} "
                                 "bytes declared")
        finally:
            body.close()

    def put_if_absent(self, key: str, data: bytes) -> bool:
        def put(client: Any, **kwargs: Any) -> None:
            client.put_object(**kwargs)

        try:
            self._call(f"put {key}", put, Bucket=self.bucket, Key=self._key(key), Body=data,
                       IfNoneMatch="*")
        except FileExistsError:
            return False
        return True

    def delete(self, key: str) -> None:
        def remove(client: Any, **kwargs: Any) -> None:
            client.delete_object(**kwargs)

        try:
            self._call(f"delete {key}", remove, Bucket=self.bucket, Key=self._key(key))
        except KeyError:
            return


def open_store(url: str, *, endpoint_url: str | None = None) -> DirectoryStore | S3Store:
    """The store a URL names: ``s3://bucket[/prefix]``, ``file:///path`` or a plain path."""
    parsed = urlparse(url)
    if parsed.scheme == "s3":
        if not parsed.netloc:
            raise ValueError(f"store URL {url!r}: s3:// needs a bucket (s3://bucket/prefix)")
        return S3Store(parsed.netloc, parsed.path, endpoint_url=endpoint_url)
    if parsed.scheme == "file":
        if parsed.netloc not in ("", "localhost"):
            raise ValueError(f"store URL {url!r}: a file:// URL names a local path "
                             "(file:///path)")
        return DirectoryStore(unquote(parsed.path))
    if parsed.scheme and len(parsed.scheme) > 1:  # a Windows drive letter is not a scheme
        raise ValueError(f"store URL {url!r}: expected s3://bucket/prefix, file:///path or "
                         "a directory")
    return DirectoryStore(url)
