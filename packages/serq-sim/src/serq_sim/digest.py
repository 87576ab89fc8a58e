"""SHA-256 without ``hashlib``: the interpreter's own module when it has one. ``hashlib`` imports OpenSSL's (about
2 ms of every ``serq run``) for the same digest; every run hashes its program (report.record_program). (A trace's
megabytes, which a run hashes only in a sweep, take OpenSSL's, some three times as fast: trace.file_digest.)"""

from __future__ import annotations

from typing import Any


def sha256() -> Any:
    """The constructor of SHA-256 hash objects (``sha256(data).hexdigest()``, ``update``), as ``hashlib.sha256``."""
    try:
        from _sha256 import sha256  # Python 3.11
    except ImportError:
        try:
            from _sha2 import sha256  # 3.12 and later
        except ImportError:  # pragma: no cover - a Python built without them
            from hashlib import sha256
    return sha256
