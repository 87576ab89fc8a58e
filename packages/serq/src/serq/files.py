"""Writing a file atomically: readers see the old file or the whole new one, never a part.

The data goes to a temporary file in the target's folder (``.NAME.XXXXXXXX.tmp``, created with the
usual ``0o666 & ~umask`` permissions), which is flushed, fsynced and then renamed over the target with
:func:`os.replace`; the folder is fsynced too where the platform allows. If anything fails, or the
writer is interrupted (``KeyboardInterrupt`` included), the temporary file is removed and the target is
left as it was. An ``OSError`` that names no file (a write to a full disk, say) is raised again naming
``path``.

Every part that writes a user's file (reports, dumps, ``serq run -o``) writes it through here.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Iterator
from typing import IO

__all__ = ["open_atomic", "write_atomic"]


def _create_temp(path: str) -> tuple[int, str]:
    folder, name = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = os.path.join(folder, f".{name}.{os.urandom(4).hex()}.tmp")  # secrets.token_hex(4), unimported
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:  # pragma: no cover - a 32-bit random collision
            continue


def _fsync_folder(folder: str) -> None:
    if os.name != "posix":  # pragma: no cover - folders cannot be opened for fsync elsewhere
        return
    try:
        fd = os.open(folder or ".", os.O_RDONLY)
    except OSError:  # pragma: no cover
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some file systems refuse to fsync a folder
        pass
    finally:
        os.close(fd)


@contextlib.contextmanager
def open_atomic(path: str | os.PathLike[str], mode: str = "w") -> Iterator[IO]:
    """Open ``path`` for writing so that it appears only once the ``with`` block has finished.

    :param mode: ``"w"`` for text (UTF-8, ``\\n`` line endings on every platform) or ``"wb"`` for bytes.

    An exception raised in the block removes the temporary file, leaves ``path`` untouched and
    propagates. The folder must exist.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"open_atomic: mode must be 'w' or 'wb', not {mode!r}")
    path = os.fspath(path)
    try:
        fd, tmp = _create_temp(path)
    except OSError as e:  # name the file the user asked for, not the temporary one
        raise type(e)(e.errno, e.strerror, path) from None
    try:
        with open(fd, "wb", closefd=True) as raw:
            if mode == "w":
                f: IO = io.TextIOWrapper(raw, encoding="utf-8", newline="")
                try:
                    yield f
                finally:
                    f.detach()  # flushes into ``raw``; ``raw`` is closed by its own ``with``
            else:
                yield raw
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename is None and e.errno is not None:  # a full disk: name the file
            raise type(e)(e.errno, e.strerror, path) from None
        raise
    _fsync_folder(os.path.dirname(path))


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`open_atomic`); a ``str`` is written as UTF-8
    with its line endings as given."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"write_atomic: data must be str or bytes, not {type(data).__name__}")
    with open_atomic(path, "wb") as f:
        f.write(data)
