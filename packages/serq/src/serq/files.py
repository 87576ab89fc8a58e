"""Writing a user's file: atomically where that can be done, through to the target where it cannot, and
never over one of the run's inputs.

Which target gets what (:func:`open_atomic`):

* **a new path, or a regular file** — written atomically: readers see the old file or the whole new one,
  never a part. The data goes to a temporary file in the target's folder (``.NAME.PID-XXXXXXXX.tmp``,
  created with the usual ``0o666 & ~umask`` permissions, or with the permissions, owner and group of the
  file it replaces, where this user may give them; a file the user may not write is refused, as a shell's
  ``>`` refuses it), which is flushed, fsynced and then renamed over the target with :func:`os.replace`; the
  folder is fsynced too where the platform allows. If anything fails, or the writer is interrupted
  (``KeyboardInterrupt`` included), the temporary file is removed and the target is left as it was. An
  ``OSError`` that names no file (a write to a full disk, say) is raised again naming ``path``.
* **a symbolic link** — the file it resolves to is the target (the rules above and below apply to it);
  the link stays a link.
* **anything else that exists** (a character device such as ``/dev/null``, a FIFO, a socket), and every
  path under ``/dev`` (``/dev/stdout``, ``/dev/fd/1``) — written through: opened for appending, never
  created, truncated, renamed over or removed; a path under ``/dev`` that does not exist (or a link to
  one) is refused (:class:`OutputError`) before anything is written. Such a write is not atomic. A FIFO blocks until some
  process reads it, as a shell's ``>`` does (saying so once on stderr when it finds none), unless the
  ``serq`` command is asked to stop while it waits for a reader (:func:`_stop_or_wait`).
* **a folder** — an error.

A file serq names itself, beside or inside what the user named (a dump folder's ``NAME.csv``, a sweep's
``OUT.points.csv`` and ``OUT.journal``), is opened with ``own=True`` (:func:`open_own_append` for a
journal): it is written only as a new path or a regular file. A symbolic link, a FIFO, a device or a
socket at that path is refused (:class:`OutputError`) before anything is written: the user named the
folder or the table, not that entry, and a link planted there must not carry a write elsewhere.

``inputs`` (the files a run read: the program, its libraries, its trace, the IR) are never written: a
target that is one of them, by any path (a symbolic or hard link included), is refused with an
:class:`OutputError` before anything is written.

Every part that writes a user's file (reports, dumps, ``serq run -o``) writes it through here. One command
writes a file at a time: every command that writes a file the user named holds that file's one lock
(:func:`output_held`, a ``flock`` on ``FILE.journal``), and a second is refused in one set of words
(:func:`taken_said`). A temporary file carries its writer's pid, so that the writers that hold a folder
(:func:`take_folder`) remove those a killed writer left (:func:`leftovers_removed`).

Reading a user's file (:func:`open_input`, :func:`read_input`): a program, a library it uses, an IR file,
a trace, a step trace or a scenario is read only as a regular file (a symbolic link to one included). A
FIFO would block the command until some process writes it (for ever, when none does), and a device such as
``/dev/zero`` never ends: the open does not wait, and anything but a regular file is an ``OSError``
naming the path and what it is, which the readers report as the file they cannot read.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO

from .errors import UserError, shown_path

__all__ = ["DUMP_HEADERS", "DUMP_MANIFEST", "MAX_JSON", "MAX_LINE", "MAX_NAME", "MAX_SOURCE", "LineTooLong", "OutputError", "SameOutputError", "byte_order_note",
           "check_distinct", "check_folder", "check_not_input", "check_output",
           "check_dumped", "check_own", "check_recorded", "check_text", "dropped_if_empty", "file_names", "file_of", "folders_synced_once", "held_alone", "journal_locked", "leftovers_removed", "lock_name", "output_held", "OutputTaken", "stale_said", "taken_said", "name_not_text", "name_of_file", "not_utf8", "open_atomic",
           "open_input", "open_own_append", "packed_note", "path_arg", "path_args", "read_input", "shown_name", "split_suffix", "text_utf16_note", "unnamable", "utf16_note",
           "write_atomic"]


class OutputError(UserError):
    """An output path the rules above refuse (an input of the run, a folder)."""


class SameOutputError(OutputError):
    """Two outputs of one command that are one file (:func:`check_distinct`): a mistake of the command line
    alone, whatever the files hold, so a usage error (status 2, ``serq_usage_error``), as flags that do not
    go together are; refused before the command does its work."""

    serq_usage_error = True


def path_arg(value: object, func: str, param: str = "path") -> str:
    """``value``, a path argument ``param`` of the library call ``func``, as a ``str``: a str or an
    ``os.PathLike`` naming a str. Anything else is a TypeError naming the call and the parameter
    (``write_atomic(None, …)`` was os.fspath's "expected str, bytes or os.PathLike object, not NoneType",
    which named neither; a bytes path, taken by os.fspath, failed later in the path's str operations)."""
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        got = os.fspath(value)
        if isinstance(got, str):
            return got
        raise TypeError(f"{func}: {param} must be a path (a str or os.PathLike), not an os.PathLike naming "
                        f"{type(got).__name__}")
    raise TypeError(f"{func}: {param} must be a path (a str or os.PathLike), not {type(value).__name__}")


def path_args(values: object, func: str, param: str = "inputs") -> list[str]:
    """``values``, an iterable of paths (``None`` items left out) given as ``param`` of ``func``, as a list
    of str (:func:`path_arg`); a str or bytes (whose letters were taken for paths) or no iterable is a
    TypeError naming the parameter."""
    if isinstance(values, (str, bytes, os.PathLike)) or not isinstance(values, Iterable):
        raise TypeError(f"{func}: {param} must be an iterable of paths (a list of str or os.PathLike), not "
                        f"{type(values).__name__}")
    return [path_arg(v, func, f"an item of {param}") for v in values if v is not None]


def _kind(mode: int) -> str:
    """What a file that is not a regular one is, in words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (a named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


#: the longest line a file read a line at a time (a trace, a table, a dump's CSV) may have
MAX_LINE = 16 * 2**20


class LineTooLong(OSError):
    """A line of a file read a line at a time is longer than its reader takes (:data:`MAX_LINE`): ``line``
    is its number (from 1)."""

    def __init__(self, path: str, line: int, limit: int):
        super().__init__(errno.EFBIG, f"line {line} is longer than {_short(limit)}", path)
        self.line = line


class _BoundedLines(io.RawIOBase):
    """A file's bytes as they are, raising :class:`LineTooLong` once a line runs past ``limit`` bytes (a
    line that lies inside one chunk read, 64 KiB, is not measured: the limit bounds what a reader holds):
    a reader of lines (csv, pandas, a text layer) holds a line whole, and a sparse file of 1 GiB of NUL
    bytes is one line of 1 GiB. One look per chunk read (``rfind`` and ``count``), not per line."""

    def __init__(self, raw: io.FileIO, limit: int, name: str):
        self._raw = raw
        self._limit = limit
        self._run = 0  # bytes since the last line feed
        self._lines = 1
        self.name = name

    def readable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._raw.fileno()

    def readinto(self, b) -> int:
        n = self._raw.readinto(b)
        if n:
            chunk = bytes(memoryview(b)[:n])
            last = chunk.rfind(b"\n")
            if last < 0:
                self._run += n
            else:
                if self._run + chunk.find(b"\n") > self._limit:
                    raise LineTooLong(self.name, self._lines, self._limit)
                self._lines += chunk.count(b"\n")
                self._run = n - last - 1
            if self._run > self._limit:
                raise LineTooLong(self.name, self._lines, self._limit)
        return n

    def close(self) -> None:
        if not self.closed:
            try:
                self._raw.close()
            finally:
                super().close()


def open_input(path: str | os.PathLike[str], *, max_line: int | None = None) -> IO[bytes]:
    """``path``, a file the user gave to be read, opened for reading in binary mode: only a regular file
    (through symbolic links). The open does not wait for a FIFO's writer; a FIFO, a device, a socket or a
    folder is an ``OSError`` whose ``strerror`` says what it is (``is a FIFO (a named pipe), not a
    file``) and whose ``filename`` is ``path``, as a missing file's is. With ``max_line``, a read that
    meets a line longer than that many bytes raises :class:`LineTooLong` (an ``OSError``)."""
    name = path_arg(path, "open_input")
    if "\0" in name:  # what a program or an IR file may say (`trace "a\0b"`): os.open raised ValueError
        raise OSError(errno.EINVAL, "a file name holds no NUL character", name)
    if why := unnamable(name):  # (os.open raised UnicodeEncodeError)
        raise OSError(errno.EILSEQ, why, name)
    try:
        fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:  # a socket opens as nothing: the system's "No such device or address" said what it is
        if e.errno == errno.ENXIO and _is_socket(name):
            raise OSError(0, "is a socket, not a file", name) from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise OSError(0, f"is {_kind(mode)}, not a file", name)
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        if max_line is not None:
            return io.BufferedReader(_BoundedLines(io.FileIO(fd, "rb", closefd=True), max_line, name),
                                     buffer_size=64 * 1024)
        return open(fd, "rb", closefd=True)  # noqa: SIM115 - the caller closes it
    except BaseException:
        os.close(fd)
        raise


def _is_socket(path: str) -> bool:
    """Whether ``path`` names a socket (through symbolic links), which no open reaches (``ENXIO``)."""
    try:
        return stat.S_ISSOCK(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


#: the most bytes a serQ source (a program, a library it uses) may have: about 800 000 statements, while a
#: program writes out at most 200 000 nodes; parsing and formatting one takes under 1 GB
MAX_SOURCE = 16 * 2**20
#: the most bytes a JSON document a user gives (an IR file, a scenario, a step trace) may have
MAX_JSON = 256 * 2**20


def _short(n: int) -> str:
    """A limit in bytes in words: ``16 MiB``, ``100 bytes``."""
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n} bytes"


def _size(n: int) -> str:
    """A number of bytes in words: ``1073741824 bytes (1 GiB)``."""
    for unit, k in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= k:
            return f"{n} bytes ({n / k:.3g} {unit})"
    return f"{n} bytes"


#: byte-order marks of the encodings a text file that is not UTF-8 is most often in (UTF-32's first: its
#: little-endian mark begins with UTF-16's)
_MARKS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
          (b"\xfe\xff", "UTF-16"))


def byte_order_note(head: bytes) -> str:
    """What the error of a text input that is not UTF-8 adds when the input begins with ``head`` (its first
    bytes): ``; it begins with a UTF-16 byte-order mark (FF FE): serQ reads UTF-8 text (iconv -f UTF-16 -t
    UTF-8 converts it)`` for a file saved as UTF-16 or UTF-32 (Windows' "Unicode"), whose error named only
    its first byte, 0xFF; else nothing."""
    for mark, encoding in _MARKS:
        if head.startswith(mark):
            shown = " ".join(f"{b:02X}" for b in mark)
            return (f"; it begins with a {encoding} byte-order mark ({shown}): serQ reads UTF-8 text (iconv -f "
                    f"{encoding} -t UTF-8 converts it)")
    return ""


#: the first bytes of the compressed and binary files most often given where text is read (a trace saved
#: compressed under its .csv name, a Parquet table named .csv), and what each is
_PACKED = ((b"\x1f\x8b", "a gzip file"), (b"BZh", "a bzip2 file"), (b"\xfd7zX", "an xz file"),
           (b"\x28\xb5\x2f\xfd", "a Zstandard file"), (b"PK\x03\x04", "a zip archive"),
           (b"PAR1", "a Parquet file"))


def packed_note(head: bytes) -> str:
    """What the error of a text input that is not UTF-8 adds when the input begins with ``head`` (its first
    bytes) as a compressed file or a Parquet table does: ``; it begins as a gzip file does (1F 8B): serQ reads
    it as text, uncompressed (decompress it first)``, where the error named only a byte of the compressed data
    (``byte 0x8B``) and quoted it; else nothing."""
    for magic, kind in _PACKED:
        if head.startswith(magic):
            shown = " ".join(f"{b:02X}" for b in magic)
            then = ("as text: a Parquet table is read only as a sweep's table or records, by a name ending in "
                    ".parquet" if kind == "a Parquet file" else "as text, uncompressed (decompress it first)")
            return f"; it begins as {kind} does ({shown}): serQ reads it {then}"
    return ""


def utf16_note(head: bytes) -> str:
    """What the error of a text input adds when it begins with ``head`` (its first bytes) as UTF-16 text
    without a byte-order mark does, a NUL byte beside each of its first two ASCII characters: ``; it begins
    as UTF-16LE text without a byte-order mark does (a NUL byte beside each ASCII character): serQ reads
    UTF-8 text (iconv -f UTF-16LE -t UTF-8 converts it)``; else nothing. Such text is UTF-8 as far as its
    bytes go (a NUL is a character), so each reader found something else wrong with it (a trace's header
    lacked every column, an IR file's key was no string, a source's second character was unexpected)."""
    if len(head) < 4:
        return ""
    a, b, c, d = head[:4]
    if b == d == 0 and 0 < a < 0x80 and 0 < c < 0x80:
        order = "LE"
    elif a == c == 0 and 0 < b < 0x80 and 0 < d < 0x80:
        order = "BE"
    else:
        return ""
    return (f"; it begins as UTF-16{order} text without a byte-order mark does (a NUL byte beside each ASCII "
            f"character): serQ reads UTF-8 text (iconv -f UTF-16{order} -t UTF-8 converts it)")


def text_utf16_note(text: str) -> str:
    """:func:`utf16_note` of an input already read as UTF-8 ``text`` (a trace's or a table's header cells
    joined, a step trace's first line): its first characters are the bytes it began with (a NUL is one)."""
    return utf16_note(text[:4].encode("utf-8", "replace"))


def not_utf8(byte: int, head: bytes, what: str | None = "the file", at: str = "") -> str:
    """The one wording of an input that is not UTF-8 text (a source, an IR file, a JSON file, a trace, a
    sweep's table): ``WHAT is not UTF-8 text (byte 0xNN AT)`` and, when the input begins with a UTF-16 or
    UTF-32 byte-order mark (``head``, its first bytes), :func:`byte_order_note`, or as a compressed file or a
    Parquet table does, :func:`packed_note`; ``what`` None gives the phrase alone, ``not UTF-8 text (…)``,
    for a message that names the input itself."""
    note = byte_order_note(head) or packed_note(head) or utf16_note(head)
    text = f"not UTF-8 text (byte 0x{byte:02X}{at}){note}"
    return text if what is None else f"{what} is {text}"


def unnamable(name: str) -> str | None:
    """Why this process cannot give the system the file name ``name`` (a str), or ``None`` when it can: a
    character its file-system encoding has no bytes for. Under ``LC_ALL=C PYTHONUTF8=0`` Python encodes names
    as ASCII, so a program calling the API with ``trace="tré.csv"`` (a name typed as text, not read from the
    system) failed with a ``UnicodeEncodeError`` traceback in whichever call met the name first; the ``serq``
    command starts itself again in UTF-8 mode there (serq.cli._names_as_utf8), which the API cannot do. A lone
    surrogate no file system gave (``"\ud800.csv"``) names no file under any encoding. What
    :func:`open_input` says of such a name, as ``OSError.strerror`` (``error: tré.csv: cannot read: …``)."""
    try:
        os.fsencode(name)
        return None
    except UnicodeEncodeError as e:
        ch = name[e.start]
    code = f"U+{ord(ch):04X}"
    if 0xD800 <= ord(ch) <= 0xDFFF:
        return f"its name holds {code}, a lone surrogate, which names no file"
    import codecs

    encoding = sys.getfilesystemencoding()
    try:
        ascii_names = codecs.lookup(encoding).name == "ascii"
    except LookupError:  # pragma: no cover - Python names only codecs it has
        ascii_names = False
    if ascii_names:
        return (f"its name holds {code}, and this process encodes file names as ASCII (the C or POSIX locale "
                "with Python's UTF-8 mode off, PYTHONUTF8=0): run Python with PYTHONUTF8=1 or -X utf8, as the "
                "serq command runs itself there")
    return (f"its name holds {code}, which this process's file-name encoding ({encoding}, the locale's) has "
            "no bytes for: run Python with PYTHONUTF8=1 or -X utf8, or in a UTF-8 locale")


def name_not_text(name: str) -> str | None:
    """Why the file name ``name`` cannot be written as text, or ``None`` when it can: ``the file's name is
    not UTF-8 text (byte 0xFF)``. Python gives a name's bytes that are not UTF-8 as lone surrogates
    (``os.fsdecode``), which UTF-8 cannot encode: such a name opens its file, but it is no text a JSON IR (a
    program's ``source`` and spans), a table's cell or a compile-cache entry can hold, and writing it there
    was a ``UnicodeEncodeError`` traceback (``serq check`` of ``caf\\xe9.sq``, saved under a Latin-1
    locale). Each place that makes a file's name part of such text refuses it with this, naming the file
    as :func:`shown_name` shows it."""
    if name.isascii():
        return None
    try:
        name.encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    try:
        raw = os.fsencode(name)
        raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return f"the file's name is not UTF-8 text (byte 0x{raw[e.start]:02X})"
    except UnicodeEncodeError:  # (a surrogate no file system gave: the name was made as text)
        return "the file's name is not UTF-8 text"
    # UTF-8 bytes this process decoded as ASCII (the C locale with Python's UTF-8 mode off: the serq command
    # starts itself again in UTF-8 mode there, serq.cli._names_as_utf8; a program calling the API does not)
    return ("the file's name is UTF-8, which this process reads as ASCII (the C or POSIX locale with Python's "
            "UTF-8 mode off, PYTHONUTF8=0; PYTHONUTF8=1 reads it)")


def shown_name(name: str) -> str:
    """``name`` as a message shows a file's name: each byte that is not UTF-8 as ``\\xNN`` (``caf\\xe9.sq``,
    as ``ls -b`` and a shell's ``$'…'`` write it), not as the surrogate Python decoded it to (``\\udce9``)."""
    if name.isascii():
        return name
    try:
        return os.fsencode(name).decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return name.encode("utf-8", "backslashreplace").decode("utf-8")


def read_input(path: str | os.PathLike[str], *, limit: int | None = None, what: str = "such a file") -> bytes:
    """The bytes of ``path``, a file the user gave to be read (see :func:`open_input`). With ``limit``, a
    file of more bytes than that is an ``OSError`` (``EFBIG``) whose ``strerror`` says so, naming ``what``
    it is (``a serQ source``): it is found from the file's size before it is read, and no more than
    ``limit`` bytes and one are read (a sparse file of 1 GB of NUL bytes, read whole and parsed, took
    10 GB and minutes to be refused)."""
    path = path_arg(path, "read_input")
    with open_input(path) as f:
        if limit is None:
            return f.read()
        size = os.fstat(f.fileno()).st_size
        data = read_bounded(f, limit, size) if size <= limit else b""
        if size > limit or len(data) > limit:
            raise OSError(errno.EFBIG, _too_large(max(size, len(data)), limit, what), os.fspath(path))
        return data


def read_bounded(f, limit: int, size: int | None = None) -> bytes:
    """What the binary stream ``f`` holds, up to ``limit`` bytes and one (more than ``limit`` is the caller's
    refusal), in a buffer of what it holds: ``read(n)`` allocates ``n`` bytes first, and a read of ``limit +
    1`` took 256 MB for a file of a few (a run near its memory limit then failed to end). ``size``, a regular
    file's size (``fstat``), is read at once with a byte more to see it grow; the rest (a file that grew, a
    pipe) in pieces of 1 MiB."""
    data = f.read(size + 1) if size is not None else b""
    if size is not None and len(data) <= size:
        return data
    parts, total = [data], len(data)
    while total <= limit:
        piece = f.read(min(2**20, limit + 1 - total))
        if not piece:
            break
        parts.append(piece)
        total += len(piece)
    return b"".join(parts)


def _too_large(size: int, limit: int, what: str) -> str:
    return f"is {_size(size)}, more than {what} may have ({_short(limit)})"


def check_text(text: str, *, limit: int, what: str, name: str) -> None:
    """Refuse a text a caller hands over in memory (``serq_frontend.compile(source=…)``) of more than
    ``limit`` bytes in UTF-8, as :func:`read_input` refuses a file of that many: an ``OSError``
    (``EFBIG``) whose ``strerror`` says so, naming ``what`` it is, and whose ``filename`` is ``name``. The
    limits of what a file may hold apply to the same text given another way."""
    if len(text) <= limit // 4:  # at most 4 bytes a character
        return
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise OSError(errno.EFBIG, _too_large(size, limit, what), name)


def held_alone(fd: int) -> bool:
    """Take an advisory lock (``flock``, exclusive) on the open file or folder ``fd`` without waiting: ``False``
    when another process holds it; ``True`` when it is taken, held until ``fd`` is closed or the process ends,
    and also where the platform or the file system has no such lock (a network one: nothing is held then).
    The rule of a sweep's journal (serq_sweep.api) and of a dump's folder (serq_report.csv): a second run
    into the same output is refused at once."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not a POSIX system
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    except OSError:  # a file system without locks
        return True
    return True


def held_waiting(fd: int, seconds: float, give_up=None) -> bool:
    """Take an advisory lock (:func:`held_alone`) on ``fd``, waiting while another process holds it: ``True``
    once it is taken; ``False`` when it is still held after ``seconds``, or as soon as ``give_up()`` is true
    (a signal came: the wait is not the user's to sit through). For an output another run holds only while it
    writes (a set of record tables): the second run writes its own after the first, where refusing it at once
    lost its output to a coincidence of milliseconds."""
    deadline = time.monotonic() + seconds
    pause = 0.001
    while not held_alone(fd):
        if time.monotonic() >= deadline or (give_up is not None and give_up()):
            return False
        time.sleep(pause)
        pause = min(pause * 2.0, 0.05)
    return True


def take_folder(folder: str, seconds: float) -> tuple[int | None, str | None]:
    """Take ``folder`` for this process's writing into it (an advisory ``flock`` on the folder itself, waited
    for as :func:`held_waiting` waits, given up on a signal): ``(fd, None)`` once taken, the descriptor the
    caller's to close when its files are written; ``(None, None)`` when the folder cannot be opened (this user
    may not read it: written unlocked); ``(None, "signal")`` when a signal came while waiting and ``(None,
    "held")`` when another process still holds it after ``seconds``, the caller's refusal to word. The one rule
    of a dump's folder (serq_report.csv) and of a set of record tables' (serq_sim.records.hold_set)."""
    from . import signals

    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None, None
    if held_waiting(fd, seconds, signals.pending):
        leftovers_removed(folder)
        return fd, None
    os.close(fd)
    return None, "signal" if signals.pending() else "held"


#: the name of a temporary file :func:`_create_temp` makes: ``.NAME.PID-XXXXXXXX.tmp``
_TEMP_NAME = None


def _temp_writer(entry: str) -> int | None:
    """The pid of the writer of ``entry``, a name in a folder, when it is a temporary file an atomic write of
    this module makes (``.NAME.PID-XXXXXXXX.tmp``); else ``None``."""
    global _TEMP_NAME
    if not (entry.startswith(".") and entry.endswith(".tmp")):
        return None
    if _TEMP_NAME is None:
        import re

        _TEMP_NAME = re.compile(r"\.(?s:.+)\.([1-9][0-9]{0,9})-[0-9a-f]{8}\.tmp")
    m = _TEMP_NAME.fullmatch(entry)
    return int(m.group(1)) if m else None


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (one this user may not signal counts as running)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (OSError, OverflowError):  # (EPERM: another user's, running)
        return True
    return True


def leftovers_removed(folder: str) -> list[str]:
    """Remove from ``folder`` the temporary files that atomic writes killed there left (SIGKILL, the OOM killer,
    a machine that went down, in the middle of a dump or a set of record tables: nothing removed them, and each
    killed write left one ``.NAME.PID-XXXXXXXX.tmp`` a file): only a regular file of this user's whose name is
    that pattern and whose writer, the pid it names, no longer runs on this machine. A live writer's file (its
    pid runs: a write under way, or its pid reused since, then kept) and anything else are left alone; the
    names removed are returned. Called by the writers that hold the folder's lock (:func:`take_folder`: a dump,
    a set of record tables), so two of them never judge one folder at once; a single atomic write elsewhere in
    the folder is a live pid's. A folder on a file system shared by several machines is out of its reach (a pid
    there may be another machine's): serQ keeps its outputs on a local file system."""
    removed: list[str] = []
    try:
        entries = os.scandir(folder or ".")
    except OSError:
        return removed
    with entries:
        for entry in entries:
            pid = _temp_writer(entry.name)
            if pid is None or _alive(pid):
                continue
            try:
                st = entry.stat(follow_symlinks=False)
                if not stat.S_ISREG(st.st_mode) or (hasattr(os, "geteuid") and st.st_uid != os.geteuid()):
                    continue
                os.unlink(entry.path)
            except OSError:
                continue
            removed.append(entry.name)
    return removed


def lock_name(path: str) -> str:
    """The file whose advisory lock is the output ``path``'s: ``PATH.journal``, the journal a sweep into
    ``path`` keeps (and only a lock, made and removed again while empty, for every other writer of ``path``)."""
    return f"{path}.journal"


class OutputTaken(OutputError):
    """An output another serq command is writing now (its lock, :func:`output_held`, is held); ``why``:
    ``"held"``, ``"runs"`` (an unheld journal of runs there: a sweep into that file that did not end) or
    ``"signal"`` (a signal came while waiting)."""

    def __init__(self, message: str, why: str = "held"):
        super().__init__(message)
        self.why = why


def taken_said(path: str, another: str, head: str | None = None) -> str:
    """The one refusal of a second writer of the output ``path`` (:func:`output_held`), every command's:
    ``another``, what to give instead (``another --out``, ``another -o``); ``head``, how it begins (the path,
    or the option and the path: ``--records r.csv``)."""
    return (f"{head or shown_path(path)}: another serq command (a run, a sweep or a comparison) is writing this file now "
            f"(its journal {shown_path(lock_name(path))} is locked); let it end, or give {another}")


def stale_said(path: str, another: str, head: str | None = None) -> str:
    """The refusal of a writer of ``path`` beside whose lock a sweep into ``path`` that did not end left its runs."""
    return (f"{head or shown_path(path)}: its journal {shown_path(lock_name(path))} holds the runs of a sweep that did not "
            f"end there (it was killed); run that sweep again to resume it, or remove the journal, or give {another}")


@contextlib.contextmanager
def output_held(path: str | os.PathLike[str], another: str, *, seconds: float = 0.0,
                said: Callable[[str], None] | None = None, head: str | None = None) -> Iterator[IO[str] | None]:
    """Within, the output ``path`` is this command's alone: one lock an output, taken by every command that
    writes it (``serq run``'s -o and --records, a sweep's table, its points table and its records, ``serq
    compare -o``, ``serq sweep --find -o``): an advisory ``flock`` on :func:`lock_name` (``PATH.journal``, made
    when there is none and removed again when this command leaves it empty, while it still holds it). Yields the
    open journal (a sweep appends its runs to it), or ``None`` where nothing is held: ``path`` is written through
    (a device, a FIFO, a path under ``/dev``), or the journal cannot be made (a folder that does not exist or
    that this user may not write: the write itself says so), or the file system has no such lock.

    Refused (:class:`OutputTaken`, in the words of :func:`taken_said`) when another command holds it after
    ``seconds`` (0: at once; a signal while waiting gives up), and (:func:`stale_said`) when the journal there,
    held by none, holds runs: a sweep into ``path`` that did not end, which that sweep resumes. A journal that
    is not a regular file of one name (a folder, a symbolic link, a hard link) is refused as
    :func:`open_own_append` refuses it, never passed over: the command would run unlocked. ``said(path)`` is
    called when an empty journal no command held was found there (what a command killed before its first run
    left)."""
    from . import signals

    path = path_arg(path, "output_held")
    st = _stat(path)
    if _through_dev(path) or (st is not None and not stat.S_ISREG(st.st_mode)):
        yield None
        return
    journal_path = lock_name(path)
    existed = os.path.lexists(journal_path)
    try:
        journal = open_own_append(journal_path)  # (its refusals, OutputError, are raised: never run unlocked)
    except OSError:
        journal = None
    if journal is None:
        yield None
        return
    journal.close()  # (opened again, and locked, by journal_locked)
    held = False
    journal, held = journal_locked(journal_path, (lambda fd: held_waiting(fd, seconds, signals.pending))
                                   if seconds > 0 else held_alone)
    try:
        fd = journal.fileno()
        if not held:
            why = "signal" if seconds > 0 and signals.pending() else "held"
            raise OutputTaken(taken_said(path, another, head), why)
        if os.fstat(fd).st_size:
            raise OutputTaken(stale_said(path, another, head), "runs")
        if existed and said is not None:
            said(journal_path)
        yield journal
    finally:
        if held:  # (not the other's: refused above)
            dropped_if_empty(journal_path, journal)  # (before the lock goes: one who opens it after makes its own)
        journal.close()


def journal_locked(path: str, take: Callable[[int], bool] = held_alone) -> tuple[IO[str], bool]:
    """The journal ``path`` opened (:func:`open_own_append`) and its lock taken by ``take(fd)``
    (:func:`held_alone`, :func:`held_waiting`): ``(journal, True)``, or ``(journal, False)`` when another command
    holds it (the journal the caller's to close). A lock taken on a file that is no longer at ``path`` once it
    is taken (its holder removed it as it ended, while this one waited for it or had just opened it) is given
    up and ``path`` opened and locked again: held, a file no longer named was no lock of the output (another
    command makes a new journal there and holds it), and a sweep's runs appended to it were lost to its resume."""
    for _ in range(1000):
        journal = open_own_append(path)
        try:
            if not take(journal.fileno()):
                return journal, False
            st, mine = _identity_no_follow(path), os.fstat(journal.fileno())
            if st == (mine.st_dev, mine.st_ino):
                return journal, True
        except BaseException:
            journal.close()
            raise
        journal.close()  # (its lock given up with it)
    raise OutputError(f"{shown_path(path)}: replaced again and again while serq took its lock")  # pragma: no cover


def _identity_no_follow(path: str) -> tuple[int, int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def dropped_if_empty(path: str, held: IO) -> bool:
    """Remove ``path`` when it is an empty regular file (a journal made and never written) and the very file
    ``held`` is (the journal open in this command, whose lock it holds): no other command appends to it while
    the lock is held, so a journal that holds a run is never removed. (It was looked at by its name alone, one
    of them after its lock had been given up: a sweep that took the lock in that moment and wrote its first
    run there lost it.) Whether it was removed."""
    try:
        st = os.lstat(path)
        mine = os.fstat(held.fileno())
        if (not stat.S_ISREG(st.st_mode) or st.st_size != 0 or mine.st_size != 0
                or (st.st_dev, st.st_ino) != (mine.st_dev, mine.st_ino)):
            return False
        os.unlink(path)
    except (OSError, ValueError):
        return False
    return True


def _create_temp(path: str, mode: int, made: list[str]) -> tuple[int, str]:
    """A new temporary file beside ``path``: its descriptor and name. ``made`` holds its name from before
    it is created, for the caller to remove should an exception come before it has the name: Ctrl-C's
    KeyboardInterrupt, raised as the file's creation returns, left it in its folder for good (a compile
    cache's folder gathered ``.compile-….bin.….tmp`` files that its pruning never looks at)."""
    folder, name = os.path.split(path)
    if _append_only(folder or "."):  # (the file was made, and then neither renamed nor removed: left there)
        raise OSError(errno.EPERM, "the folder is append-only, chattr +a: a file made there can be neither renamed "
                                   "nor removed", path)
    pid = os.getpid()
    name = _temp_stem(folder, name, pid)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    while True:
        # (the writer's pid in the name: a file a killed writer left is told from a live one's, leftovers_removed)
        tmp = os.path.join(folder, f".{name}.{pid}-{os.urandom(4).hex()}.tmp")  # secrets.token_hex(4), unimported
        made[:] = [tmp]
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:  # pragma: no cover - a 32-bit random collision
            made.clear()
            continue


#: the bytes a temporary file's name adds to the name it is made for, besides the writer's pid: ``.``, ``.``, ``-``
#: and 8 hex digits, ``.tmp``
_TEMP_EXTRA = 15


def _temp_stem(folder: str, name: str, pid: int = 0) -> str:
    """``name`` as the temporary file's name holds it: whole, or its first characters when the whole would
    make that name longer than its folder's file system takes (NAME_MAX, 255 bytes on most): a file whose
    name has 242 to 255 bytes, which the folder takes, was refused as 'File name too long', the temporary
    file's name being longer (by 15 bytes and the digits of ``pid``)."""
    extra = _TEMP_EXTRA + len(str(pid))
    try:
        limit = os.pathconf(folder or ".", "PC_NAME_MAX")
    except (OSError, ValueError, AttributeError):  # (no pathconf, or the folder cannot say: the usual limit)
        limit = 255
    if not isinstance(limit, int) or limit <= extra:
        limit = 255
    room = limit - extra
    raw = os.fsencode(name)
    if len(raw) <= room:
        return name
    while name and len(os.fsencode(name)) > room:  # whole characters, never part of one
        name = name[: max(0, len(name) - max(1, (len(os.fsencode(name)) - room) // 4))]
    return name


def _remove_made(made: list[str]) -> None:
    """Remove the temporary file :func:`_create_temp` was making when an exception came."""
    for tmp in made:
        with contextlib.suppress(OSError):
            os.unlink(tmp)


def _temp_failed(e: OSError, path: str, target: str) -> OSError:
    """The error of a temporary file that cannot be made beside ``target`` (the file ``path`` names), naming
    ``path`` and saying what was tried: ``serq run -o /proc/self/status`` said only "No such file or
    directory" of a file that exists (a folder of /proc takes no new file)."""
    folder = os.path.dirname(target) or "."
    why = (f"cannot create a file in its folder {shown_path(folder)} ({e.strerror or e}); serq writes a file whole or not "
           "at all, as a new file in its folder renamed over it")
    return type(e)(e.errno, why, path)


def _probe(path: str, st: os.stat_result | None) -> None:
    """Refuse now a file :func:`open_atomic` will write by a temporary file that cannot be made: one is made
    and removed (a folder of /proc, a read-only file system, a folder this user may not write)."""
    if st is not None and (not stat.S_ISREG(st.st_mode) or _through_dev(path)):
        return  # written through, no temporary file
    target = os.path.realpath(path) if os.path.islink(path) else path
    made: list[str] = []
    try:
        fd, tmp = _create_temp(target, 0o600, made)
    except OSError as e:
        raise _temp_failed(e, path, target) from None
    except BaseException:
        _remove_made(made)
        raise
    try:
        os.close(fd)
    finally:
        _remove_made(made)


#: the folders whose fsync is put off to the end of the :func:`folders_synced_once` block being run (None
#: outside one), in the order first written
_put_off: dict[str, None] | None = None


@contextlib.contextmanager
def folders_synced_once() -> Iterator[None]:
    """Within the block, each atomic write (:func:`open_atomic`, :func:`write_atomic`) fsyncs its file and
    renames it over its target as ever, and the folder it was renamed in is fsynced once, when the block ends
    (however it ends), rather than after every file: a command that writes many files into one folder
    (``serq run --records`` of 3 000 tables, a dump of many observes) fsynced that folder once a file, twice
    the fsyncs, 28 s of them. Each file is whole or not there at every moment, as before; what the end's
    fsync makes lasting is the renames. A block within a block is the outer one's."""
    global _put_off
    if _put_off is not None:
        yield
        return
    _put_off = {}
    try:
        yield
    finally:
        folders, _put_off = _put_off, None
        for folder in folders:
            _fsync_folder(folder)


#: per thread, ``files``: the files of the :func:`renamed_together` block it runs, written whole beside their
#: targets and not yet renamed over them (None outside one): ``(temporary file, target)`` in the order written.
#: (A thread's own: runs in threads of one process dump at once, each its own set.)
_staged_by_thread = threading.local()


@contextlib.contextmanager
def renamed_together(before: Callable[[], None] | None = None) -> Iterator[None]:
    """Within the block, each atomic write (:func:`open_atomic`, :func:`write_atomic`) writes its file whole
    beside its target as ever, but renames none over its target: when the block ends without an exception,
    ``before()`` is called (if given) and every file is renamed over its target in the order written; when it
    raises, every file it wrote is removed and no target is touched. A set of files that is one output (a run's
    dump: its observes, its gauges and its list of them) is so written all or nothing: a dump that a full disk
    cut short left the files written before the failure over an earlier dump's, its list removed. (A rename
    does not fail for want of room; one that fails all the same leaves the files renamed before it, and the
    rest are removed.) SIGINT, SIGTERM and SIGHUP wait while the files are renamed (serq.signals.held, in the
    main thread: the command's and the Python API's alike), and come once all are. The files of the set are all on the disk at once before the first rename, beside those
    they replace. A block within a block is the outer one's."""
    here = _staged_by_thread
    if getattr(here, "files", None) is not None:
        yield
        return
    here.files = staged = []
    try:
        yield
    except BaseException:
        here.files = None
        for tmp, _target in staged:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    here.files = None
    done = 0
    from . import signals

    try:
        # the renames all or none: SIGINT, SIGTERM and SIGHUP wait until they are done (the command's deferred;
        # the Python API's Ctrl-C, whose KeyboardInterrupt between two renames left part of the set renamed)
        with signals.held():
            if before is not None:
                before()
            for tmp, target in staged:
                try:
                    os.replace(tmp, target)
                except OSError as e:
                    raise type(e)(e.errno, f"{e.strerror} (replacing it by the file serq wrote beside it)",
                                  target) from None
                done += 1
                _sync_folder(os.path.dirname(target))
    finally:
        for tmp, _target in staged[done:]:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _sync_folder(folder: str) -> None:
    """Fsync ``folder`` now, or at the end of the :func:`folders_synced_once` block being run."""
    if _put_off is not None:
        _put_off[folder] = None
    else:
        _fsync_folder(folder)


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


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino


def check_not_input(path: str | os.PathLike[str], inputs: Iterable[str | os.PathLike[str] | None]) -> None:
    """Refuse (:class:`OutputError`) to write ``path`` when it is one of ``inputs`` (the same file, by any
    path). A path that does not exist yet is no input."""
    path = path_arg(path, "check_not_input")
    inputs = path_args(inputs, "check_not_input")
    target = _identity(path)
    if target is None:
        return
    for p in inputs:
        if _identity(p) == target:
            same = "" if p == path else f" (it is {p})"
            raise OutputError(f"{shown_path(path)}: refusing to write over an input of this run{same}")


def check_own(path: str | os.PathLike[str]) -> None:
    """Refuse (:class:`OutputError`) an existing entry at ``path`` that is not a regular file, not
    following a link: ``path`` is a file serq names itself."""
    path = path_arg(path, "check_own")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    except OSError as e:
        raise type(e)(e.errno, e.strerror, path) from None
    if stat.S_ISREG(st.st_mode):
        return
    what = "a symbolic link" if stat.S_ISLNK(st.st_mode) else _kind(st.st_mode)  # a FIFO (a named pipe), …
    raise OutputError(f"{shown_path(path)}: is {what}; serq names this file itself and writes it only as a new or "
                      "regular file (remove it, or choose another output)")


def _missing_under_dev(path: str) -> bool:
    return _through_dev(path) or _through_dev(os.path.realpath(path))


def _stat(path: str) -> os.stat_result | None:
    """What ``path`` names, through links (``None``: nothing, a path under a file included); an error reading it
    names ``path``."""
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # (p.sq/x.csv was 'Not a directory', where serq sweep -o
        return None  # said 'no folder p.sq to write it in', as every output now does)
    except OSError as e:
        raise type(e)(e.errno, e.strerror, path) from None


#: the descriptors the ``serq`` command found closed at its start (``>&-``), which it holds open on the null
#: device so that no file it opens takes their place (serq.cli)
HELD_CLOSED: set[int] = set()

#: the names of a process's own descriptors: /dev/fd/N, /proc/self/fd/N, /proc/PID/fd/N
_FD_NAME = ("/dev/fd/", "/proc/self/fd/", f"/proc/{os.getpid()}/fd/")
#: what a message calls the descriptors 0, 1 and 2
_STREAMS = {0: "standard input", 1: "standard output", 2: "standard error"}


def _closed_descriptor(path: str) -> int | None:
    """The descriptor ``path`` names (``/dev/stdout``, ``/dev/fd/1``, ``/proc/self/fd/1``, or a symbolic link
    to one of them), when it is one the command found closed at its start (:data:`HELD_CLOSED`); else None.
    Such a name leads to the null device the command holds there: ``serq run p.sq -o /dev/stdout >&-`` wrote
    its report there and said 0, where a shell's ``>`` finds no such file."""
    if not HELD_CLOSED:
        return None
    p = os.path.abspath(path)
    for _ in range(40):  # (links to links, as the system follows at most 40)
        for prefix in _FD_NAME:
            if p.startswith(prefix) and p[len(prefix):].isdigit() and p[len(prefix):].isascii():
                n = int(p[len(prefix):])
                return n if n in HELD_CLOSED else None
        try:
            p = os.path.normpath(os.path.join(os.path.dirname(p), os.readlink(p)))
        except (OSError, ValueError):
            return None
    return None


def _target(path: str) -> os.stat_result | None:
    """What an output ``path`` names now (``None``: nothing, and it may be created), refused
    (:class:`OutputError`) when it is a folder, a path under ``/dev`` that does not exist (never
    created) or a descriptor the command was started without (:func:`_closed_descriptor`); an error reading
    it names ``path``."""
    fd = _closed_descriptor(path)
    if fd is not None:
        raise OutputError(f"{shown_path(path)}: {_STREAMS.get(fd, f'the descriptor {fd}')} is closed (the command "
                          "was started without it: >&-), so there is nothing there to write to")
    st = _stat(path)
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{shown_path(path)}: is a folder, not a file")
    if st is not None and stat.S_ISSOCK(st.st_mode):  # (the write's open found "No such device or address")
        raise OutputError(f"{shown_path(path)}: is a socket, which no file is written to (remove it, or choose "
                          "another output)")
    if st is None and _missing_under_dev(path):
        raise OutputError(f"{shown_path(path)}: no such file (a path under /dev is written through to what is there, never "
                          "created)")
    return st


def _writable(path: str, st: os.stat_result | None) -> None:
    """Refuse (:class:`OutputError`) to replace an existing regular file the user may not write (a
    ``0444`` report, say), as a shell's ``>`` refuses it: the rename that replaces a file needs only its
    folder to be writable, so such a file was replaced all the same."""
    if (st is not None and stat.S_ISREG(st.st_mode) and not _through_dev(path) and hasattr(os, "access")
            and not os.access(path, os.W_OK)):
        # (on a file system mounted read-only it said "permission denied", which chmod cannot mend)
        why = "it is on a read-only file system" if _read_only_mount(path) else "permission denied"
        raise OutputError(f"{shown_path(path)}: the file is not writable ({why}); serq replaces a file only "
                          "where it could write it, as a shell's > does")
    if st is not None and stat.S_ISREG(st.st_mode) and not _through_dev(path) and _append_only(path, st):
        # (writable, by appending: the rename over it was refused after the work, naming the temporary file)
        raise OutputError(f"{shown_path(path)}: the file is append-only (chattr +a), and serq writes a file whole, "
                          "as a new file renamed over it, which such a file refuses (clear the flag, or choose "
                          "another output)")


def _append_only(path: str, st: os.stat_result | None = None) -> bool:
    """Whether the file or folder ``path`` (``st``, else found) may only be appended to (Linux's ``chattr +a``, a
    BSD's or macOS's append flag): no rename replaces such a file, and what is made in such a folder can be
    neither renamed nor removed; False where that cannot be told."""
    if st is None:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return False
    flags = getattr(st, "st_flags", None)  # (BSD, macOS)
    if flags is not None:
        return bool(flags & (getattr(stat, "UF_APPEND", 0) | getattr(stat, "SF_APPEND", 0)))
    if not sys.platform.startswith("linux"):
        return False
    import struct

    try:
        import fcntl

        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except (ImportError, OSError):
        return False
    try:
        size = struct.calcsize("l")  # FS_IOC_GETFLAGS, _IOR('f', 1, long); the flags are an int
        got = fcntl.ioctl(fd, 0x80000000 | (size << 16) | (ord("f") << 8) | 1, bytes(size))
        return bool(int.from_bytes(got[:4], sys.byteorder) & 0x20)  # FS_APPEND_FL
    except OSError:  # (a file system without the flags)
        return False
    finally:
        os.close(fd)


def _read_only_mount(path: str) -> bool:
    """Whether ``path`` is on a file system mounted read-only (False where that cannot be told)."""
    try:
        return bool(os.statvfs(path).f_flag & getattr(os, "ST_RDONLY", 0))
    except (OSError, AttributeError):  # (no statvfs: Windows)
        return False


def check_output_name(path: str, what: str = "file") -> None:
    """Refuse (:class:`OutputError`) an output's name that names no ``what`` (a file, a folder): the empty
    name and one holding a NUL character, which no system takes. The library's outputs passed them to the
    system: ``report.dump("")`` failed with Python's FileNotFoundError of ``''``, ``write_atomic("", …)``
    with one of its temporary file, and a NUL was os.lstat's ValueError, "embedded null byte". (The command
    line refuses an empty name as it reads its options.) So is a name this process cannot give the system
    (:func:`unnamable`: ``sweep(out="ré.csv")`` under ``LC_ALL=C PYTHONUTF8=0`` was a UnicodeEncodeError)."""
    if not path:
        raise OutputError(f"an empty name names no {what}")
    if "\0" in path:
        raise OutputError(f"{path!r}: a file name holds no NUL character")
    if why := unnamable(path):
        raise OutputError(f"{shown_path(path)}: cannot write: {why}")


def check_output(path: str | os.PathLike[str], *, own: bool = False) -> None:
    """Refuse (:class:`OutputError`), before a command does its work, an output :func:`open_atomic` would
    refuse or could not create when the work is done: a folder, a path under ``/dev`` that does not exist,
    a new file in a folder that does not exist; with ``own``, anything but a regular file
    (:func:`check_own`)."""
    path = path_arg(path, "check_output")
    check_output_name(path)
    if own:
        check_own(path)
    st = _target(path)
    _writable(path, st)
    if st is None:
        # the folder as the system walks the path (d/../r.txt needs d, which realpath's .. skips over), and
        # the one a symbolic link to nothing leads to
        for folder in (os.path.dirname(path) or ".", os.path.dirname(os.path.realpath(path))):
            if not os.path.isdir(folder):
                raise OutputError(f"{shown_path(path)}: no folder {shown_path(os.path.dirname(path) or folder)} to write it in")
    _probe(path, st)


def check_folder(path: str | os.PathLike[str], *, own: bool = False) -> None:
    """Refuse (:class:`OutputError`), before a command does its work, a folder it will write files into
    (making it, with its parents, when missing: ``serq run --dump DIR``) that cannot be one: an existing
    entry that is not a folder (a file, a device, a FIFO), a symbolic link to nothing, or a missing path
    whose nearest existing parent is not a folder. With ``own`` (a folder serq names itself, a dump's
    ``gauge``), a symbolic link is refused too. An empty path and one holding a NUL character name no folder
    (``report.dump("")`` passed here and failed making it, Python's FileNotFoundError of ``''``; a NUL was
    os.lstat's ValueError, "embedded null byte")."""
    path = path_arg(path, "check_folder")
    check_output_name(path, "folder")
    probe = path
    while True:
        try:
            st = os.lstat(probe)
        except (FileNotFoundError, NotADirectoryError):  # missing, or under something that is no folder
            parent = os.path.dirname(probe) or "."
            if os.path.abspath(parent) == os.path.abspath(probe):  # pragma: no cover - the root exists
                return
            probe = parent
            continue
        except OSError as e:
            raise type(e)(e.errno, e.strerror, probe) from None
        if stat.S_ISLNK(st.st_mode):
            if own and probe == path:
                raise OutputError(f"{shown_path(path)}: is a symbolic link; serq names this folder itself and writes "
                                  "only into a folder of its own (remove it, or choose another output)")
            st = _stat(probe)
        if st is not None and stat.S_ISDIR(st.st_mode):
            return
        what = ("a symbolic link to nothing" if st is None else "a file" if stat.S_ISREG(st.st_mode)
                else "a FIFO" if stat.S_ISFIFO(st.st_mode) else "a socket" if stat.S_ISSOCK(st.st_mode)
                else "a device")
        if probe == path:
            raise OutputError(f"{shown_path(path)}: is {what}; files are written into a folder here")
        raise OutputError(f"{shown_path(path)}: cannot be made a folder: {shown_path(probe)} is {what}")


def _output_key(path: str) -> tuple | None:
    """What identifies the file an output ``path`` writes, or ``None`` for one that may take several outputs
    (a device, a FIFO, a path under ``/dev``: written through)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        st = None
    if st is not None:
        return ("file", st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None
    if _missing_under_dev(path):
        return None
    return ("new", os.path.normcase(os.path.realpath(path)))


def check_distinct(outputs: Iterable[tuple[str, str | os.PathLike[str]]],
                   folders: Iterable[tuple[str, str | os.PathLike[str]]] = (), *, of: str = "a run") -> None:
    """Refuse (:class:`SameOutputError`, a usage error: status 2) two outputs of one command, ``(what, path)``
    pairs (``("-o", "r.csv")``), that are one file by any path (``./r.csv``, a symbolic or hard link
    included): the second would replace the first. Devices and FIFOs may take several. ``of``: what the
    message says the outputs are of (``a run``, ``a sweep``). ``folders``, ``(what, path)`` pairs of folders the command writes
    files into (``("--dump", "out")``, made when missing), may not be one of those files nor lie under one:
    ``-o r.txt --records out.csv --dump out.csv`` wrote the report and made the folder, then failed on the
    records, and ``-o r.txt --dump r.txt/d`` wrote the report, then failed to make the folder."""
    outputs = [(what, path_arg(path, "check_distinct", f"the path of {what}")) for what, path in outputs]
    folders = [(what, path_arg(path, "check_distinct", f"the folder of {what}")) for what, path in folders]
    for fwhat, folder in folders:
        below = os.path.normcase(os.path.realpath(os.fspath(folder)))
        for what, path in outputs:
            if _output_key(os.fspath(path)) is None:  # a device or a FIFO: no folder is made there
                continue
            at = os.path.normcase(os.path.realpath(os.fspath(path)))
            if below == at or below.startswith(at.rstrip(os.sep) + os.sep):
                where = "is" if below == at else f"holds the folder {shown_path(folder)} of"
                raise SameOutputError(f"{shown_path(path)}: named by {what} as a file, and {where} {fwhat} (a "
                                      f"folder of files); each output of {of} needs a file of its own")
    seen: dict[tuple, tuple[str, str]] = {}
    for what, path in outputs:
        path = os.fspath(path)
        key = _output_key(path)
        if key is None:
            continue
        if key in seen:
            other_what, other = seen[key]
            same = shown_path(path) if other == path else f"{shown_path(path)} (it is {shown_path(other)})"
            raise SameOutputError(f"{same}: named by both {other_what} and {what}; each output of {of} needs a "
                                  "file of its own")
        seen[key] = (what, path)


def open_own_append(path: str | os.PathLike[str]) -> IO[str]:
    """Open ``path``, a file serq names itself (a sweep's journal), for appending text: created if new,
    refused (:class:`OutputError`) when it is a symbolic link, anything but a regular file, or a file of other
    names too (a hard link: it is written in place); never blocks on a FIFO. What is appended starts a line: a file whose last line was cut short (a kill, a full
    disk, in the middle of a write) gets its line end first, so the first line appended is a line of its
    own (it was glued to the torn one, and the whole line skipped as torn when the journal was read). That
    line end is written with the first text appended, not when the file is opened: a file the caller
    refuses after opening it (locked, read and found to be someone else's) is left as it was."""
    path = path_arg(path, "open_own_append")
    check_own(path)
    flags = (os.O_RDWR | os.O_APPEND | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
             | getattr(os, "O_CLOEXEC", 0))
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as e:
        if os.path.islink(path):  # swapped for a link since the check
            raise OutputError(f"{shown_path(path)}: is a symbolic link; serq names this file itself and writes it only "
                              "as a new or regular file") from None
        raise type(e)(e.errno, e.strerror, path) from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        check_own(path)  # names what it is
        raise OutputError(f"{shown_path(path)}: not a regular file")  # pragma: no cover - swapped since the check
    if st.st_nlink > 1:
        # a hard link: the same file under another name, which is written in place here (appended to, and
        # emptied by a sweep's --fresh), unlike a file written whole and renamed over: a user's file linked at a
        # journal's name was emptied and filled with the sweep's lines
        os.close(fd)
        raise OutputError(f"{shown_path(path)}: is a hard link, one file with {st.st_nlink} names; serq names this file "
                          "itself and writes it in place only as a file of its own (remove it, or choose another "
                          "output)")
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
    return _Appender(fd, path)


class _Appender(io.TextIOBase):
    """What :func:`open_own_append` returns: text appended to a file, each ``write`` whole at once (no
    buffer: ``flush`` has nothing to do, and ``close`` writes nothing, so it cannot fail a second time).
    An error of a write (a full disk, ``ulimit -f``, an I/O error) names the file, as every other output's
    does (:func:`open_atomic`): a text file's ``OSError`` named none, and the ``serq`` command took it for
    its own bug, a traceback (``OSError: [Errno 27] File too large`` from a sweep's journal)."""

    def __init__(self, fd: int, path: str):
        super().__init__()
        self._fd = fd
        self.name = path
        #: the first write looks at the file's last byte, and ends a line cut short first (open_own_append)
        self._first = True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, s: str) -> int:
        if self.closed:
            raise ValueError("write to a closed file")
        data = memoryview(s.encode("utf-8"))
        try:
            if self._first:
                self._first = False
                size = os.fstat(self._fd).st_size
                if size and os.pread(self._fd, 1, size - 1) != b"\n":
                    data = memoryview(b"\n" + bytes(data))  # (O_APPEND: at the end, wherever the offset is)
            while data:
                data = data[os.write(self._fd, data):]
        except OSError as e:
            raise type(e)(e.errno, e.strerror, self.name) from None
        return len(s)

    def close(self) -> None:
        if not self.closed:
            try:
                os.close(self._fd)
            finally:
                super().close()


def _through_dev(path: str) -> bool:
    return os.name == "posix" and os.path.abspath(path).startswith("/dev/")


@contextlib.contextmanager
def _as_mode(raw: IO, mode: str) -> Iterator[IO]:
    """``raw`` itself for ``"wb"``; for ``"w"`` a UTF-8 text layer over it, detached (so flushed into
    ``raw``) at the end, ``raw`` being closed by its owner."""
    if mode != "w":
        yield raw
        return
    f: IO = io.TextIOWrapper(raw, encoding="utf-8", newline="")
    try:
        yield f
    finally:
        f.detach()


#: how long a write through to a FIFO or a device waits for its reader between looks at a stop request
THROUGH_WAIT = 0.02


def _stop_or_wait(fd: int | None = None) -> None:
    """Wait a little for a reader (for ``fd`` to take data, or for a FIFO's reader to open it), unless the
    ``serq`` command was asked to stop (SIGINT, SIGTERM; :mod:`serq.signals`): then raise the stop. A
    write is inside ``serq.signals.deferred`` (a report is written whole once begun), where a signal is only
    recorded: a FIFO that no process reads, or a reader that stopped reading, kept the command waiting for
    ever, deaf to every signal."""
    signals = sys.modules.get("serq.signals")
    stop = signals.stop_requested() if signals is not None else None
    if stop is not None:
        raise stop
    if fd is None:
        time.sleep(THROUGH_WAIT)
    else:
        import select

        select.select([], [fd], [], THROUGH_WAIT)


class _Through(io.RawIOBase):
    """The raw writer of a path written through: a non-blocking descriptor whose writes that cannot proceed
    wait for the reader in steps (:func:`_stop_or_wait`). A write that makes progress is never cut short."""

    def __init__(self, fd: int):
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def write(self, b) -> int:
        while True:
            try:
                return os.write(self._fd, b)
            except BlockingIOError:
                _stop_or_wait(self._fd)

    def close(self) -> None:
        if not self.closed:
            try:
                os.close(self._fd)
            finally:
                super().close()


def _open_through(path: str, flags: int) -> int:
    """``os.open`` of a path written through. A FIFO is opened without blocking, again and again until a
    process reads it (as a shell's ``>`` waits), or until the command is asked to stop. A FIFO that no
    process reads yet is said once on stderr (:func:`_say_waiting`) before the wait: the command sat silent,
    its work done, and looked hung."""
    nonblock = getattr(os, "O_NONBLOCK", 0)
    try:
        fifo = nonblock and stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        fifo = False
    said = False
    while True:
        try:
            return os.open(path, flags | nonblock)
        except OSError as e:
            if not (fifo and e.errno == errno.ENXIO):  # ENXIO: a FIFO that no process reads yet
                raise
        if not said:
            _say_waiting(path)
            said = True
        _stop_or_wait()


def _say_waiting(path: str) -> None:
    """One line on stderr: the output ``path`` is a FIFO that no process reads, which the write waits for."""
    try:
        sys.stderr.write(f"serq: {shown_path(path)} is a FIFO (a named pipe) that no process reads: waiting for "
                         "one to open it (Ctrl-C gives the write up)\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):  # no stderr, or a closed one: the wait is not said
        pass


@contextlib.contextmanager
def _write_through(path: str, mode: str) -> Iterator[IO]:
    flags = os.O_WRONLY | os.O_APPEND | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = _open_through(path, flags)
    except OSError as e:
        raise type(e)(e.errno, e.strerror, path) from None
    try:
        raw_fd = _Through(fd)
    except BaseException:
        os.close(fd)
        raise
    try:
        with io.BufferedWriter(raw_fd) as raw, _as_mode(raw, mode) as f:
            yield f
    except OSError as e:
        if e.errno == errno.EPIPE:
            # a FIFO (or /dev/stdout, a pipe) whose reader closed it before the whole was written: said as the
            # output it is; an EPIPE was taken by click for standard output's, and the command ended with
            # status 1 and no word
            raise OutputError(f"{shown_path(path)}: the process reading it closed it before the whole was written "
                              "(a broken pipe); what was written before is all it got") from None
        if e.filename is None and e.errno is not None:  # a full device: name the file
            raise type(e)(e.errno, e.strerror, path) from None
        raise


def open_atomic(path: str | os.PathLike[str], mode: str = "w", *,
                inputs: Iterable[str | os.PathLike[str] | None] = (), perms: int | None = None,
                own: bool = False) -> contextlib.AbstractContextManager[IO]:
    """Open ``path`` for writing by the rules of this module: a new path or a regular file appears only
    once the ``with`` block has finished; a device, a FIFO or a path under ``/dev`` is written through.

    :param mode: ``"w"`` for text (UTF-8, ``\\n`` line endings on every platform) or ``"wb"`` for bytes.
    :param inputs: files that must not be written (:func:`check_not_input`).
    :param perms: the permission bits of the file written atomically (default: those of the file it
        replaces, else ``0o666 & ~umask``).
    :param own: ``path`` is a file serq names itself: anything there but a regular file is refused.

    An exception raised in the block removes the temporary file, leaves ``path`` untouched and
    propagates. The folder must exist. Its arguments are checked at the call (a path that is no path is a
    TypeError naming it, :func:`path_arg`), not when the ``with`` block is entered.
    """
    path = path_arg(path, "open_atomic")
    check_output_name(path)
    if mode not in ("w", "wb"):
        raise ValueError(f"open_atomic: mode must be 'w' or 'wb', not {mode!r}")
    _check_perms_own(perms, own, "open_atomic")
    return _open_atomic(path, mode, path_args(inputs, "open_atomic"), perms, own)


def _check_perms_own(perms: object, own: object, func: str) -> None:
    """Refuse, at the call, a ``perms`` that is not permission bits (an int from 0 to 0o777: a str was a
    TypeError of os.open's once the block was entered, naming nothing; 0o4755 made a set-user-ID file) and
    an ``own`` that is no bool (taken by its truth: ``own="no"`` refused what was not a regular file)."""
    from .numbers import switch

    if perms is not None:
        if isinstance(perms, bool) or not isinstance(perms, int):
            raise TypeError(f"{func}: perms must be permission bits, an int from 0 to 0o777, not "
                            f"{type(perms).__name__}")
        if not 0 <= perms <= 0o777:
            shown = oct(perms) if perms.bit_length() <= 64 else f"an int of {perms.bit_length()} bits"
            raise ValueError(f"{func}: perms must be permission bits, an int from 0 to 0o777 (rwx for the owner, "
                             f"the group and others), not {shown}")
    if not switch(own):
        raise TypeError(f"{func}: own must be True or False, not {own!r:.60}")


@contextlib.contextmanager
def _open_atomic(path: str, mode: str, inputs: list[str], perms: int | None, own: bool) -> Iterator[IO]:
    if own:
        check_own(path)
    check_not_input(path, inputs)
    st = _target(path)
    _writable(path, st)
    if (st is not None and not stat.S_ISREG(st.st_mode)) or (st is not None and _through_dev(path)):
        with _write_through(path, mode) as f:
            yield f
        return
    target = os.path.realpath(path) if os.path.islink(path) else path  # a link stays a link
    exact = perms is not None or st is not None
    if perms is None:
        perms = st.st_mode & 0o777 if st is not None else 0o666
    made: list[str] = []
    try:
        fd, tmp = _create_temp(target, perms, made)
    except OSError as e:  # name the file the user asked for, not the temporary one
        raise _temp_failed(e, path, target) from None
    except BaseException:  # Ctrl-C as the file was made
        _remove_made(made)
        raise
    try:
        if st is not None and hasattr(os, "fchown") and (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
            # and its owner and group, where this user may give them (root may; another user may keep the
            # group of one they are in): root's serq fmt of a user's file left it root's, the user unable
            # to write it
            with contextlib.suppress(OSError):
                os.fchown(fd, st.st_uid, st.st_gid)
        if exact:  # the replacement keeps the permissions of the file it replaces, or gets those asked for
            with contextlib.suppress(OSError, NotImplementedError):
                os.chmod(fd, perms)
        with open(fd, "wb", closefd=True) as raw, _as_mode(raw, mode) as f:
            yield f
            raw.flush()
            os.fsync(raw.fileno())
        staged = getattr(_staged_by_thread, "files", None)
        if staged is not None:  # (renamed with the others of its set, or removed with them: renamed_together)
            staged.append((tmp, target))
            return
        os.replace(tmp, target)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.filename is None and e.errno is not None:  # a full disk: name the file
            raise type(e)(e.errno, e.strerror, path) from None
        if isinstance(e, OSError) and e.filename == tmp and e.errno is not None:  # the rename: the file, not tmp
            raise type(e)(e.errno, f"{e.strerror} (replacing it by the file serq wrote beside it)", path) from None
        raise
    _sync_folder(os.path.dirname(target))


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *,
                 inputs: Iterable[str | os.PathLike[str] | None] = (), perms: int | None = None,
                 own: bool = False) -> None:
    """Write ``data`` to ``path`` by the rules of :func:`open_atomic`; a ``str`` is written as UTF-8
    with its line endings as given."""
    path = path_arg(path, "write_atomic")
    inputs = path_args(inputs, "write_atomic")
    _check_perms_own(perms, own, "write_atomic")
    if isinstance(data, str):
        data = data.encode("utf-8")
    elif not isinstance(data, bytes | bytearray | memoryview):
        raise TypeError(f"write_atomic: data must be str or bytes, not {type(data).__name__}")
    with open_atomic(path, "wb", inputs=inputs, perms=perms, own=own) as f:
        f.write(data)


# ---------------------------------------------------------------------------------------------------
# File names made of names a program gives
# ---------------------------------------------------------------------------------------------------

#: The characters a file name keeps as they are (any other is escaped; so are an initial ``.`` and, in
#: names that differ from another only in case, the capitals).
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
#: Names Windows gives to devices, with any extension: their first letter is escaped.
_DEVICES = frozenset(["CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(10)), *(f"LPT{i}" for i in range(10))])
#: The longest file name (before ``.csv``) kept whole: with ``.csv`` and the atomic write's temporary
#: name (``.NAME.csv.PID-XXXXXXXX.tmp``) it stays below the 255 bytes of common file systems.
MAX_NAME = 200
#: How much of an escaped name longer than :data:`MAX_NAME` is kept before ``~`` and its hash.
_KEPT = MAX_NAME - 17


def _escape(name: str, capitals: bool) -> str:
    out = []
    for i, ch in enumerate(name):
        if ch in _SAFE and not (i == 0 and ch == ".") and not (capitals and "A" <= ch <= "Z"):
            out.append(ch)
        else:
            out.extend(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
    text = "".join(out) or "%"
    if text.split(".", 1)[0].upper() in _DEVICES:
        text = f"%{ord(text[0]):02X}{text[1:]}"
    if len(text) > MAX_NAME:
        cut = _KEPT
        while "%" in text[cut - 2 : cut]:  # do not split an escape
            cut -= 1
        import hashlib

        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        text = f"{text[:cut]}~{digest}"
    return text


#: the file a dump (``serq run --dump DIR``, ``serq_report.dump``) writes last in its folder: the files it
#: wrote, ``{"serq-dump": 1, "observes": [STEM, …], "gauges": [STEM, …]}`` (each a :func:`file_names`
#: stem), so that a reader (``serq plot DIR``) takes no file an earlier dump left there
DUMP_MANIFEST = "serq-dump.json"

#: the header a dump writes on each CSV file: an observe's samples (``DIR/NAME.csv``), a gauge's change points
#: (``DIR/gauge/NAME.csv``)
DUMP_HEADERS = {"observe": "time,session,turn,value", "gauge": "time,value"}


def _own_head(path: str) -> bytes:
    """The first 4 KiB of ``path``, a name serq made beside what the user named, before writing over it:
    ``b""`` where nothing is there (or an empty file, which has nothing to lose); anything but a regular
    file is refused (:func:`check_own`)."""
    check_own(path)
    try:
        with open(path, "rb") as f:
            return f.read(4096)
    except FileNotFoundError:
        return b""
    except OSError as e:
        raise type(e)(e.errno, e.strerror, path) from None


def check_dumped(path: str | os.PathLike[str], kind: str) -> None:
    """Refuse (:class:`OutputError`) to write a dump's file (``kind``: ``observe`` or ``gauge``, a CSV of
    :data:`DUMP_HEADERS`; ``list``, the :data:`DUMP_MANIFEST`) over a regular file a dump did not write: a
    CSV whose first line is not the dump's header (a byte-order mark and a CR before its end allowed), a
    list that does not begin as a JSON object whose first key is ``"serq-dump"``. The user named the folder, not its files: ``serq
    run p.sq --dump .`` replaced a ``response.csv`` of theirs in the current folder with the samples of the
    observe ``response``. Nothing there, or an empty file, has nothing to lose; anything but a regular file
    is :func:`check_own`'s."""
    path = path_arg(path, "check_dumped")
    head = _own_head(path)
    if not head:
        return
    if kind == "list":  # (as a dump writes it: the object's first key "serq-dump")
        import re

        ok = re.match(rb'(\xef\xbb\xbf)?\s*\{\s*"serq-dump"\s*:', head) is not None
        why, what = 'not a JSON object beginning with "serq-dump"', "its list of the files it wrote"
    else:
        first = head.split(b"\n", 1)[0].removeprefix(b"\xef\xbb\xbf").removesuffix(b"\r")
        ok = first == DUMP_HEADERS[kind].encode()
        why, what = f"its first line is not {DUMP_HEADERS[kind]}", f"the CSV of {'an' if kind == 'observe' else 'a'} {kind}"
    if not ok:
        folder = os.path.dirname(path) or "."
        raise OutputError(f"{shown_path(path)}: not a file a dump writes ({why}); a dump into {shown_path(folder)} writes {what} there "
                          "(remove it, or dump elsewhere)")


def check_recorded(path: str | os.PathLike[str], named: str) -> None:
    """Refuse (:class:`OutputError`) to write a table of records at ``path``, a name serq made beside the
    file the user named (``named``: ``serq run --records r.csv`` of a program of several tables writes
    ``r.NAME.csv``), over a regular file a run did not write there: a CSV whose first line does not begin
    ``session,turn,time`` (the columns every table of records begins with; a byte-order mark allowed), a
    Parquet file that does not begin ``PAR1``. ``--records r.csv`` replaced an ``r.req.csv`` of the
    user's. Nothing there, or an empty file, has nothing to lose; anything but a regular file is
    :func:`check_own`'s."""
    path = path_arg(path, "check_recorded")
    head = _own_head(path)
    if not head:
        return
    if path.lower().endswith(".parquet"):
        ok, why = head.startswith(b"PAR1"), "not a Parquet file"
    else:
        first = head.split(b"\n", 1)[0].removeprefix(b"\xef\xbb\xbf").removesuffix(b"\r")
        ok, why = first == b"session,turn,time" or first.startswith(b"session,turn,time,"), \
            "its first line does not begin session,turn,time"
    if not ok:
        raise OutputError(f"{shown_path(path)}: not a table of records serq wrote ({why}); --records {named} writes a table "
                          "of the program's records there (remove it, or give --records another name)")


def split_suffix(path: str) -> tuple[str, str]:
    """``path`` as its stem and its suffix, the suffix that names a file's format wherever serq takes one
    (``r.json``, ``t.csv``, ``p.svg``) and that the files it names beside an output keep (``t.points.csv``,
    ``r.request.csv``): the text from the last ``.`` of the file's name on, the whole name when it is only
    a suffix (``.csv``: the stem is its folder). ``os.path.splitext`` gives such a name no suffix, as a
    hidden file's, while the tables' and records' formats were read from the name's end: ``serq sweep -o
    .csv`` wrote a CSV table and its points table ``.csv.points``, which no reader takes, ``serq run
    --records .csv`` of two tables ``.csv.request``, ``-o .json`` the text report and ``serq plot -o .svg``
    said a plot is .svg."""
    base = os.path.basename(path)
    i = base.rfind(".")
    if i < 0:
        return path, ""
    cut = len(path) - len(base) + i
    return path[:cut], path[cut:]


def file_names(names: Iterable[str]) -> dict[str, str]:
    """The file name (without ``.csv``) of each of the ``names`` written to one folder (a dump's observes and
    gauges, ``serq_report.csv.dump``), or into one file's name (a program's record tables,
    ``serq_sim.records.record_files``): a name a program or an IR file gives never names a folder or a path.

    A name made of ASCII letters, digits, ``_``, ``.`` and ``-`` that does not begin with ``.``, is not a
    Windows device name (``con``, ``nul.x``, ``com1``, … in any case) and is at most :data:`MAX_NAME`
    characters is its own file name. In any other, every other character, an initial ``.`` and the
    first letter of a device name are written ``%XX``, the hexadecimal (capitals) of each of its UTF-8
    bytes (``a/b`` is ``a%2Fb``, ``..`` is ``%2E.``, ``%`` is ``%25``); the empty name is ``%``. Names
    that would differ only in case (which a case-insensitive file system cannot tell apart) have their
    capitals escaped too (``X`` and ``x`` are ``%58`` and ``x``). An escaped name longer than
    :data:`MAX_NAME` keeps its first characters, then ``~`` and the first 16 hexadecimal digits of the
    SHA-256 of the name. ``%`` and ``~`` appear only where these rules put them, so distinct names get
    distinct file names (up to a collision of 64 bits of SHA-256).
    """
    names = list(dict.fromkeys(names))
    plain = {n: _escape(n, False) for n in names}
    folded: dict[str, list[str]] = {}
    for n in names:
        folded.setdefault(plain[n].lower(), []).append(n)
    for group in folded.values():
        if len(group) > 1:
            for n in group:
                plain[n] = _escape(n, True)
    return plain


def file_of(name: str, present: Iterable[str]) -> str | None:
    """The file name (without ``.csv``) :func:`file_names` gave ``name`` in a folder whose file names
    (without ``.csv``) are ``present``, or None when ``name`` has none there: a reader's way to the file of
    a name (``serq plot DIR --cdf NAME``), by the writer's rule. That is the name's own escape, or, when a
    name that differs from it only in case was written beside it, its escape with the capitals escaped
    too; compared exactly, as a case-insensitive file system would open ``x.csv`` for ``X``. (The name
    itself is no path: ``a/b`` is ``a%2Fb``, and ``../x`` names nothing outside the folder.)"""
    present = set(present)
    for candidate in (_escape(name, True), _escape(name, False)):
        if candidate in present:
            return candidate
    return None


def name_of_file(stem: str) -> str:
    """The name :func:`file_names` wrote as ``stem`` (``a%2Fb`` is ``a/b``, ``%`` the empty name), to show a
    folder's names as a program gives them; a name cut to its hash (``…~`` and 16 hexadecimal digits) is
    shown as its file name."""
    if "%" not in stem or "~" in stem:
        return stem
    if stem == "%":
        return ""
    from urllib.parse import unquote

    return unquote(stem, errors="replace")


# ---------------------------------------------------------------------------------------------------
# What a program may read
# ---------------------------------------------------------------------------------------------------


def widened_paths() -> list[str]:
    """The folders ``SERQ_PATH`` names (``os.pathsep``-separated; empty entries left out): a program's
    ``use`` searches them after its own folder, and a program may read a library or a trace inside them
    as well as inside its own folder and the installed parts' library folders (docs/security.md)."""
    return [p for p in os.environ.get("SERQ_PATH", "").split(os.pathsep) if p.strip()]


def inside(path: str | os.PathLike[str], folder: str | os.PathLike[str]) -> bool:
    """Whether ``path``, with every symbolic link resolved, lies in ``folder`` (resolved too). A name holding
    a NUL character, or one this process cannot give the system (:func:`unnamable`), names no file, and lies
    in no folder."""
    if "\0" in os.fspath(path) or "\0" in os.fspath(folder):
        return False
    if any(isinstance(p, str) and unnamable(p) for p in (os.fspath(path), os.fspath(folder))):
        return False
    real, root = os.path.realpath(path), os.path.realpath(folder)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


# ---------------------------------------------------------------------------------------------------
# Paths as pathlib gives them, without importing it
# ---------------------------------------------------------------------------------------------------
# pathlib imports urllib.parse and ipaddress: about 3 ms of a short command's start-up. These give what
# pathlib.Path gives (on every Python) where the answer is plain, and ask pathlib itself where it is not.


def _plain(p: str) -> bool:
    """Whether ``str(pathlib.Path(p)) == p`` on POSIX for sure: no empty or ``.`` component, no trailing
    ``/`` (but ``/`` itself), not ``//`` at the start."""
    if os.name != "posix" or not p or p.startswith("//"):
        return False
    if p == "/":
        return True
    parts = p.split("/")
    return all(x not in ("", ".") for x in (parts[1:] if p.startswith("/") else parts))


def path_str(p: str | os.PathLike[str]) -> str:
    """``str(pathlib.Path(p))``: the path as pathlib spells it (``a//b/./c/`` is ``a/b/c``)."""
    p = os.fspath(p)
    if isinstance(p, str) and _plain(p):
        return p
    from pathlib import Path

    return str(Path(p))


def path_join(base: str | os.PathLike[str], name: str) -> str:
    """``str(pathlib.Path(base) / name)``."""
    joined = os.path.join(os.fspath(base), name)
    if isinstance(joined, str) and _plain(joined) and _plain(path_str(base)) and _plain(name):
        return joined
    from pathlib import Path

    return str(Path(base) / name)


def path_name(p: str | os.PathLike[str]) -> str:
    """``pathlib.Path(p).name``: the last component (``''`` for ``/``, ``.`` and ``''``)."""
    p = os.fspath(p)
    if isinstance(p, str) and _plain(p):
        return p.rpartition("/")[2]
    from pathlib import Path

    return Path(p).name


def _stat_plainly(p: str) -> os.stat_result | None:
    """``os.stat(p)``, or None when ``p`` does not exist (ENOENT, ENOTDIR: every pathlib says so); any other
    failure raises ``_Ask`` (what pathlib makes of it is pathlib's to say)."""
    import errno

    try:
        return os.stat(p)
    except OSError as e:
        if e.errno in (errno.ENOENT, errno.ENOTDIR):
            return None
        raise _Ask() from None
    except ValueError:  # a NUL in the name
        raise _Ask() from None


class _Ask(Exception):
    """pathlib decides (see :func:`_stat_plainly`)."""


def path_exists(p: str | os.PathLike[str]) -> bool:
    """``pathlib.Path(p).exists()``."""
    p = path_str(p)
    try:
        return _stat_plainly(p) is not None
    except _Ask:
        from pathlib import Path

        return Path(p).exists()


def path_is_file(p: str | os.PathLike[str]) -> bool:
    """``pathlib.Path(p).is_file()``."""
    p = path_str(p)
    try:
        st = _stat_plainly(p)
    except _Ask:
        from pathlib import Path

        return Path(p).is_file()
    return st is not None and stat.S_ISREG(st.st_mode)


def path_resolved(p: str | os.PathLike[str]) -> str:
    """``str(pathlib.Path(p).resolve())``: the absolute path with every symbolic link resolved. A loop of
    symbolic links that pathlib's ``resolve`` refuses with a ``RuntimeError`` (before Python 3.13; later
    ones resolve it as far as it goes) is an ``OSError`` (``ELOOP``): no ``except OSError`` of a caller
    caught the ``RuntimeError`` (a link loop named ``x.sq`` beside a program whose ``use`` found no library
    was a traceback of the compile)."""
    p = path_str(p)
    real = os.path.realpath(p)
    try:
        if _stat_plainly(real) is not None and _plain(real):  # what pathlib's resolve gives when it exists
            return real
    except _Ask:
        pass
    from pathlib import Path

    try:
        return str(Path(p).resolve())
    except RuntimeError as e:  # (Python < 3.13: "Symlink loop from '…'")
        import errno

        raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), p) from e
