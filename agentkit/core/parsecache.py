"""Parsed YAML remembered by the content hash of its text: the ``.pyc`` idea for scenarios,
cassettes, traces and snapshots.

The YAML file stays the source of truth: an entry is keyed by the SHA-256 of the text, so an
edited file is a new key and parsed again, and nothing can be stale. An entry holds the data
:func:`agentkit.core.yamlsafe.parse_yaml` built (plain data only: strings, numbers,
booleans, nulls, lists, mappings) in ``marshal`` form, and every hit builds a fresh copy, so a
caller may change what it gets.

Two layers:

* **in the process**, always: a replay, a pytest session or an evaluation that reads the same
  cassette or scenario again does not parse it again (at most :data:`MEMORY_BYTES` kept, the
  least recently used dropped first);
* **on disk**, when ``AGENTKIT_PARSE_CACHE`` names a folder: processes started often over the
  same files (a CI job over a large suite, whose cache folder the CI keeps) read them back
  instead of parsing. Off by default: keyed by content, the folder grows with every edit of
  every file, so it belongs where its owner clears it (``rm -r`` is always safe). Each entry
  carries a checksum of its payload; an entry that cannot be read, fails its checksum or does
  not load is ignored and written again. The folder's name holds the Python version and the
  cache's format, so interpreters never read each other's entries.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

__all__ = ["ParseCache", "PARSE_CACHE", "MISSING", "MEMORY_BYTES", "ENVIRONMENT", "text_key"]

#: The environment variable naming the on-disk folder (unset: no disk layer).
ENVIRONMENT = "AGENTKIT_PARSE_CACHE"
#: The most bytes (in marshal form) the in-process layer keeps.
MEMORY_BYTES = 64 * 1024 * 1024
#: Bumped whenever what a parse builds changes: older entries are then never read.
FORMAT = 1
_MARSHAL_VERSION = 4
_CHECKSUM_BYTES = 32
#: What :meth:`ParseCache.get` returns for a key it does not hold.
MISSING: Any = object()


def text_key(text: str) -> str:
    """The key of ``text``: the SHA-256 of its UTF-8 bytes."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ParseCache:
    """The two layers (module docstring), counting what they did: ``parsed`` (misses the
    caller parsed and stored), ``memory_hits``, ``disk_hits``, ``disk_rejected`` (entries on
    disk ignored: unreadable, a wrong checksum, not loadable)."""

    def __init__(self, memory_bytes: int = MEMORY_BYTES) -> None:
        self.memory_bytes = memory_bytes
        self._kept: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.parsed = 0
        self.memory_hits = 0
        self.disk_hits = 0
        self.disk_rejected = 0

    def get(self, key: str) -> Any:
        """A fresh copy of the data stored under ``key``, or :data:`MISSING`."""
        with self._lock:
            blob = self._kept.get(key)
            if blob is not None:
                self._kept.move_to_end(key)
                self.memory_hits += 1
        if blob is not None:
            return marshal.loads(blob)
        folder = self.folder()
        if folder is None:
            return MISSING
        data = self._read(folder / f"{key}.marshal")
        if data is not MISSING:
            self._keep(key, marshal.dumps(data, _MARSHAL_VERSION))
        return data

    def put(self, key: str, data: Any) -> None:
        """Store ``data`` (just parsed) under ``key``; data marshal cannot hold is not kept."""
        try:
            blob = marshal.dumps(data, _MARSHAL_VERSION)
        except ValueError:
            return
        with self._lock:
            self.parsed += 1
        self._keep(key, blob)
        folder = self.folder()
        if folder is not None:
            _write(folder / f"{key}.marshal", blob)

    def clear(self) -> None:
        """Forget the in-process layer (the disk layer is its folder's to clear)."""
        with self._lock:
            self._kept.clear()
            self._size = 0

    @staticmethod
    def folder() -> Path | None:
        """The disk layer's folder, from ``AGENTKIT_PARSE_CACHE`` (None: no disk layer)."""
        root = os.environ.get(ENVIRONMENT)
        if not root:
            return None
        version = f"py{sys.version_info[0]}{sys.version_info[1]}"
        return Path(root) / f"parsed-{version}-f{FORMAT}"

    def _keep(self, key: str, blob: bytes) -> None:
        if len(blob) > self.memory_bytes:
            return
        with self._lock:
            old = self._kept.pop(key, None)
            self._size -= len(old) if old is not None else 0
            self._kept[key] = blob
            self._size += len(blob)
            while self._size > self.memory_bytes:
                _, dropped = self._kept.popitem(last=False)
                self._size -= len(dropped)

    def _read(self, path: Path) -> Any:
        try:
            stored = path.read_bytes()
        except OSError:
            return MISSING  # not there (or not readable): parse
        checksum, blob = stored[:_CHECKSUM_BYTES], stored[_CHECKSUM_BYTES:]
        try:
            if hashlib.blake2b(blob, digest_size=_CHECKSUM_BYTES).digest() != checksum:
                raise ValueError("checksum")
            data = marshal.loads(blob)
        except (ValueError, EOFError, TypeError):
            with self._lock:
                self.disk_rejected += 1
            return MISSING
        with self._lock:
            self.disk_hits += 1
        return data


def _write(path: Path, blob: bytes) -> None:
    """Write an entry atomically (a temporary file renamed over it); a folder that cannot be
    written is no error: the cache is only a cache."""
    checksum = hashlib.blake2b(blob, digest_size=_CHECKSUM_BYTES).digest()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
        try:
            with os.fdopen(handle, "wb") as file:
                file.write(checksum + blob)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return


#: The cache every :func:`~agentkit.core.yamlsafe.parse_yaml` goes through.
PARSE_CACHE = ParseCache()
