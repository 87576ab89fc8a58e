"""The compile cache: a ``.sq`` program's IR kept between runs, so that loading an unchanged program again
reads one file instead of importing lark and parsing, desugaring and linking.

It lives beside lark's tables, in :func:`cache_dir` (``$SERQ_CACHE_DIR``, else ``$XDG_CACHE_HOME/serq``
or ``~/.cache/serq``; an empty ``SERQ_CACHE_DIR`` turns both caches off), one file per key
(``compile-KEY.bin``). ``SERQ_COMPILE_CACHE=0`` (or ``off``, ``no``, ``false``) turns this cache off
alone. The ``.sq`` loader (``serq run``, ``serq check``, ``serq ir``) uses it; :func:`serq_frontend.compile`
does not.

The key is a hash of everything the compile's result depends on that is known before compiling: the
program's path as given and where it resolves to, its text, the ``--set`` and ``--def`` values, the size
and modification time of every ``.py`` and ``.lark`` file of serq-frontend, serq-ir and serq (the host,
whose messages a compile's warnings are written in; an edited checkout misses; stamped once per process),
every installed serq and serq-* distribution, lark and msgspec (their ``*.dist-info`` names, which hold the
versions; from the scan that found the plugins), every plugin that implements a frontend hook or registers the stage kinds and policies a program names
(sugar layers, library paths, serq-sim's registration hooks: its name, distribution, and the size and
modification time of its module's file and of the file each implementation is defined in, which differ
for a package whose ``__init__`` imports its hooks), the sugar layers third parties register (name, the
digest of the grammar's text, the builders' rules: a grammar read from a data file), the Python version and
the IR version.

An entry holds the key, what the compile found while resolving ``use`` (the library folders it asked for,
``SERQ_PATH`` and the plugins' ``serq_frontend_library_paths``, asked at its first ``use`` and at a hit of
such an entry only: a program that uses no library needs none; every candidate path it looked
at: absent, or a file and where it resolves to; the text hash of every file it read), the files of the
modules the sugar layers of other distributions are defined in (size and modification time), what the
compile wrote to stderr, and the IR. A hit checks every candidate and file again, so an edited library,
or a library that appears earlier on the search path, is a miss; then it writes the stored stderr again
(text that is printable lines of at most a MiB, as a compile's diagnostics are: an entry holding other
text is a miss, and a compile that wrote such text, a plugin's own print, is not stored: :func:`replayable`)
and decodes the IR with serq-ir's codec against its schema (``serq_ir.decode(check=False)``: serq-ir's
checks of the references are left to what runs the IR, ``serq_sim.run``, which makes them on a fresh
compile's IR too, so they are made once). The IR keeps its source spans and ``source``, so run-time
errors quote the program as after a fresh compile.

Only successful compiles are stored, written atomically (:func:`serq.files.write_atomic`) and readable by
the user alone. An entry that is corrupt, truncated, of another key or another layout is a miss, and is
replaced; so is one that is not a regular file, belongs to another user or is writable by others (a
folder that is not empty at an entry's name, which is not the cache's to delete, is left, said in a
warning on stderr once per process: that program compiles at every run until it is removed). A
folder that belongs to another user or that others can write is not used at all (:func:`cache_dir`).
Nothing in an entry is executed: its header is JSON and its IR is decoded by serq-ir. A write that finds
more than :data:`KEEP` entries removes the oldest written (files of other names are never counted or
removed). A compile inside :class:`unstored` (a sweep's points) does not use the cache.

This module imports no part of the compiler: a hit imports neither lark nor the parser, the sugar layers
or the linker.
"""

from __future__ import annotations

import _thread
import json
import os
import sys
from collections.abc import Mapping
from stat import S_ISREG
from typing import TYPE_CHECKING, Any

from serq.files import MAX_JSON, MAX_SOURCE, path_is_file, path_join, path_resolved, path_str, read_input

if TYPE_CHECKING:
    from pathlib import Path

try:  # BLAKE2 without importing hashlib, whose OpenSSL module costs milliseconds at start-up
    from _blake2 import blake2b as _blake2b
except ImportError:  # pragma: no cover - a Python without the builtin module
    from hashlib import blake2b as _blake2b

#: The layout of an entry (bumped when it changes; part of the key). 2: the library folders are no part of
#: the key; an entry of a compile that asked for them holds them among its deps.
FORMAT = 2
_MAGIC = b"serq-compile-cache\n"
#: At most this many entries are kept (the oldest written go first).
KEEP = 256
#: The distributions whose version is part of the key, beside the serq and serq-* ones of the plugins (:func:`_versions`).
_DISTRIBUTIONS = ("lark", "msgspec")
#: The frontend's hooks, and those of the stage kinds and policies a program names (serq.extensions), whose
#: implementations are part of the key.
_HOOKS = ("serq_frontend_register_sugar", "serq_frontend_library_paths", "serq_sim_register_stage_kinds",
          "serq_sim_register_eviction_orders", "serq_sim_register_preemption_policies",
          "serq_sim_register_share_policies")


def _untrusted(st: os.stat_result) -> str | None:
    """Why a cache folder or file with this status is not to be trusted (None: it is). On POSIX it must
    belong to the user serq runs as and be writable by nobody else."""
    if os.name != "posix":  # pragma: no cover - no owners and modes to check
        return None
    if st.st_uid != os.geteuid():
        return "belongs to another user"
    if st.st_mode & 0o022:
        return "can be written by other users"
    return None


_warned: set[str] = set()
#: held while a warning's key is looked up in :data:`_warned` and added: two threads that find a folder
#: unusable at once warn once between them
_WARN = _thread.allocate_lock()


def cache_dir() -> Path | None:
    """Where serq-frontend keeps files between runs: ``$SERQ_CACHE_DIR`` (empty: nowhere), else
    ``$XDG_CACHE_HOME/serq``, else ``~/.cache/serq``; None when it cannot be created or written, or when it
    belongs to another user or others can write it (then both caches are off, with a warning on stderr
    once per process: what such a folder holds could have been written by someone else)."""
    folder = _cache_folder()
    if folder is None:
        return None
    from pathlib import Path

    return Path(folder)


def _cache_folder() -> str | None:
    """:func:`cache_dir` as a string (``str(cache_dir())``), made without pathlib: a hit of the compile
    cache imports none (pathlib imports urllib.parse: about 3 ms of a short command's start-up)."""
    env = os.environ.get("SERQ_CACHE_DIR")
    if env is not None:
        if not env.strip():
            return None
        if not os.path.isabs(env):
            # as a relative XDG_CACHE_HOME below: SERQ_CACHE_DIR=rel made ./rel in whatever folder serq ran in
            # (a program's folder someone sent included), and a ~ no shell expanded (a unit file, a .env) a
            # folder named ~ there; both caches are off, said once
            from serq.errors import PATH_WIDTH, clipped

            # (quoted as a file's name is, cut past PATH_WIDTH characters: one of 5 000 was quoted whole)
            _warn(env, f"SERQ_CACHE_DIR is {clipped(repr(env), PATH_WIDTH)}, not an absolute path: the caches are "
                       "off (a relative folder would be made in whatever folder serq runs in)")
            return None
        d = path_str(env)
    else:
        # a relative XDG_CACHE_HOME is ignored, as the XDG base directory specification says (it made a
        # folder rel/serq in whatever folder serq ran in, a program's folder someone sent included), and
        # without an absolute home there is no default folder: both caches are off
        base = os.environ.get("XDG_CACHE_HOME") or ""
        if not os.path.isabs(base):
            home = os.path.expanduser("~")
            # (a home that is no folder is none: HOME=/nonexistent, a system user's, was made, by root, with
            # .cache/serq in it)
            if not os.path.isabs(home) or not os.path.isdir(home):
                return None
            base = os.path.join(home, ".cache")
        d = path_join(base, "serq")
    try:
        if not os.path.isdir(d):  # a folder there already is what Path.mkdir(exist_ok=True) leaves alone
            from pathlib import Path

            Path(d).mkdir(parents=True, exist_ok=True, mode=0o700)
        st = os.stat(d)
    except OSError:
        return None
    why = _untrusted(st)
    if why is not None:
        from serq.errors import shown_path

        _warn(str(d), f"not using the cache folder {shown_path(d)}: it {why} (make it your own and not writable "
                      "by others, or set SERQ_CACHE_DIR to another folder)")
        return None
    return d if os.access(d, os.W_OK) else None


def _warn(key: str, message: str) -> None:
    """``serq: warning: MESSAGE`` on stderr, once per process for ``key`` (the look-up and the add are
    one step under :data:`_WARN`: with two steps, two threads could each find the key absent)."""
    if sys.stderr is None:
        return
    with _WARN:
        if key in _warned:
            return
        _warned.add(key)
    from serq.errors import printable_lines

    sys.stderr.write(f"serq: warning: {printable_lines(message)}\n")


#: the largest cache file read: an entry holds an IR (an IR file is at most serq.files.MAX_JSON) and its
#: header (the files it depends on, what the compile wrote on stderr)
MAX_ENTRY = MAX_JSON + 16 * 2**20


def read_trusted(path: str | os.PathLike[str], *, limit: int = MAX_ENTRY) -> bytes | None:
    """The bytes of a cache file, or None when it is missing, is not a regular file (a symbolic link is
    not followed; a FIFO is not waited for: the open does not block), belongs to another user or others
    can write it, or is larger than ``limit`` bytes, found from its size before it is read (and not read on
    past it, should it grow): a sparse entry of 1 GiB, or one a disk's fault made such, was read whole,
    27 s and 6 GB before the compile found it corrupt."""
    flags = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
             | getattr(os, "O_NONBLOCK", 0))
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not S_ISREG(st.st_mode) or _untrusted(st) is not None or st.st_size > limit:
            return None
        size = st.st_size
        with open(fd, "rb", closefd=False) as f:
            # the size found, and a byte more to tell a file that grew since (read(limit + 1) took a buffer of
            # the limit, 272 MB, at every read: a failure under a bound on virtual memory)
            data = f.read(size + 1)
        return data if len(data) <= size else None  # (one that grew while it was read: as if unreadable)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_trusted(path: str | os.PathLike[str], data: bytes) -> None:
    """Write a cache file atomically, readable by the user alone; a cache that cannot be written is no error.
    Whatever is at ``path`` and is not a regular file (a FIFO, a symbolic link, an empty folder) is removed
    first and replaced: written through, a FIFO there kept every command waiting for a reader that never
    came, and a link carried the write to the file it named. What cannot be removed, a folder that is not
    empty (whose files are not the cache's to delete), is left as it is, said once per process in a warning
    on stderr: the file is not kept, so what it would hold is made again on every run (a program compiled
    at every run, silently)."""
    from stat import S_ISDIR

    from serq.files import OutputError, write_atomic

    try:
        st = os.lstat(path)
    except OSError:
        st = None
    if st is not None and not S_ISREG(st.st_mode):
        try:
            if S_ISDIR(st.st_mode):
                os.rmdir(path)
            else:
                os.unlink(path)
        except OSError as e:
            what = "a folder that is not empty" if S_ISDIR(st.st_mode) else "what is not a file"
            from serq.errors import shown_path

            _warn(f"entry:{os.fspath(path)}", f"the cache cannot keep {shown_path(os.fspath(path))}: {what} is there and "
                  f"cannot be removed ({e.strerror or e}); remove it, or what it would keep is made again at "
                  "every run")
            return
    try:
        write_atomic(path, data, perms=0o600, own=True)
    except (OSError, OutputError):  # swapped for something else since, or no room: no entry
        return


def enabled() -> bool:
    """Whether the compile cache is on (``SERQ_COMPILE_CACHE`` is not ``0``, ``off``, ``no``, ``false``:
    serq.switches)."""
    from serq.switches import switch

    return switch("SERQ_COMPILE_CACHE", True)


def _digest(data: bytes) -> str:
    return _blake2b(data, digest_size=32).hexdigest()


def _text_digest(text: str) -> str:
    return _digest(text.encode("utf-8", "surrogatepass"))


# ---------------------------------------------------------------------------------------------------
# The key
# ---------------------------------------------------------------------------------------------------


def _stamp(path: str | None) -> list[Any] | None:
    """``[path, size, mtime_ns]`` of a file (``[path]`` when it cannot be read)."""
    if not path:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return [path]
    return [path, st.st_size, st.st_mtime_ns]


def _tree(package_dir: str) -> list[Any]:
    """Size and modification time of every ``.py`` and ``.lark`` file under a package's folder."""
    out: list[Any] = [package_dir]
    for folder, dirs, files in os.walk(package_dir):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for f in sorted(files):
            if f.endswith((".py", ".lark")):
                out.append(_stamp(os.path.join(folder, f)))
    return out


def _dist_label(dist: Any) -> str | None:
    """A distribution as the key names it: its ``*.dist-info`` folder's name (which holds the version),
    else its name and version."""
    if dist is None:
        return None
    path = getattr(dist, "path", None)
    if isinstance(path, str) and path.endswith(".dist-info"):
        return os.path.basename(path)
    return f"{dist.metadata['Name']} {dist.version}"


def _plugin_file(plugin: Any) -> str | None:
    f = getattr(plugin, "__file__", None)
    if f is None:  # an object: the module its class is defined in
        f = getattr(sys.modules.get(getattr(type(plugin), "__module__", "")), "__file__", None)
    return f


def _function_file(function: Any) -> str | None:
    """The file of the module a hook implementation is defined in (``None``: unknown)."""
    module = sys.modules.get(getattr(function, "__module__", None) or "")
    return getattr(module, "__file__", None)


def _plugins(pm: Any) -> list[Any]:
    """Every implementation of the frontend's hooks: hook, plugin name, distribution, the plugin's module
    file and the file its implementation is defined in. The two differ for a plugin that is a package whose
    ``__init__`` imports its hooks from a module of it: what the hook registers is written in that module,
    and an edit of it (a kind renamed, a sugar layer taken out) is a miss as an edit of the plugin's own
    file is."""
    if pm is None:
        return []
    dists = None
    out = []
    for hook_name in _HOOKS:
        hook = getattr(pm.hook, hook_name, None)
        if hook is None:
            continue
        for impl in hook.get_hookimpls():
            if dists is None:
                dists = {id(p): d for p, d in pm.list_plugin_distinfo()}
            own = _plugin_file(impl.plugin)
            where = _function_file(impl.function)
            out.append([hook_name, impl.plugin_name, _dist_label(dists.get(id(impl.plugin))), _stamp(own),
                        _stamp(where) if where != own else None])
    return out


#: the code flags of a function whose call runs none of its body: a coroutine, a generator, an async generator
_UNRUN = 0x80 | 0x20 | 0x200


class _NoKey(Exception):
    """A plugin's ``serq_frontend_register_sugar`` failed while the key was made: the compile, uncached, calls
    it again and says how (:func:`serq.plugins.collect`)."""


def _layers(pm: Any) -> list[Any]:
    """What the sugar layers third parties register hold beside their code, whose files the key stamps: each
    one's name, the digest of its grammar's text and its builders' rules. A grammar is often read from a data
    file of the plugin's (a ``.lark`` file beside its module), whose edit changed no file the key stamped: the
    program compiled from the cache with the grammar it had, a rule renamed or taken out too. The hook is
    called here (not through ``pm.hook``: serQ's own layers, which the stamp of serq-frontend's files keys,
    are not imported by a hit) for the implementations outside serq-frontend only."""
    hook = getattr(pm.hook, "serq_frontend_register_sugar", None) if pm is not None else None
    if hook is None:
        return []
    out: list[Any] = []

    def register(layer: Any = None, *more: Any, **named: Any) -> None:
        grammar = getattr(layer, "grammar", None)
        builders = getattr(layer, "builders", None)
        out.append([str(getattr(layer, "name", None)),
                    _text_digest(grammar) if isinstance(grammar, str) else type(grammar).__name__,
                    sorted(str(k) for k in builders) if isinstance(builders, Mapping) else None])

    for impl in reversed(hook.get_hookimpls()):  # (registration order, as collect puts them back)
        if getattr(impl, "wrapper", False) or impl.hookwrapper:
            continue
        if (getattr(impl.function, "__module__", None) or "").startswith("serq_frontend."):
            continue
        code = getattr(getattr(impl.function, "__func__", impl.function), "__code__", None)
        if code is not None and code.co_flags & _UNRUN:
            # an async def or a function that yields runs none of its body when called (a coroutine never
            # awaited, Python's RuntimeWarning): the compile refuses it, naming the plugin (serq.plugins.unrun_body)
            raise _NoKey
        args = {"register": register}
        try:
            impl.function(*[args.get(a) for a in impl.argnames])
        except Exception as e:  # noqa: BLE001 - the compile names the plugin
            raise _NoKey from e
    return out


def library_paths(pm: Any) -> list[Path]:
    """The library folders: those ``SERQ_PATH`` names, then those the installed parts contribute
    (``serq_frontend_library_paths``), in plugin order: what a compile searches after the program's own
    folder, where a ``use`` may read, and part of a cache entry's key."""
    from pathlib import Path

    return [Path(x) for x in _library_folders(pm)]


def _library_folders(pm: Any) -> list[str]:
    """:func:`library_paths` as strings (``str(Path(x))`` of each), made without pathlib."""
    from serq.files import widened_paths

    out = [path_str(x) for x in widened_paths()]
    hook = getattr(pm.hook, "serq_frontend_library_paths", None) if pm is not None else None
    if hook is not None:
        # a relative folder is resolved against the current folder when its plugin was registered, not at
        # each call: a plugin imported through a relative sys.path entry gives Path(__file__).parent
        # relative, and a chdir later (the library API's manager is kept for the process) moved its library
        from serq.plugins import registered_in

        impls = [i for i in hook.get_hookimpls() if not (getattr(i, "wrapper", False) or i.hookwrapper)]
        bases = {registered_in(pm, i.plugin) for i in impls}
        if len(bases) <= 1:  # (one folder for all: the hook is called as any other, wrappers and tracing too)
            base = next(iter(bases), None)
            for paths in hook():
                if _bad_folders(paths) is not None:
                    raise _folders_failure(pm, hook)
                out.extend(_resolved(x, base) for x in (paths or []))
        else:  # plugins registered in different folders: each one's resolved against its own, in call order
            for impl in reversed(impls):
                paths = impl.function()
                if _bad_folders(paths) is not None:
                    raise _folders_failure(pm, hook)
                out.extend(_resolved(x, registered_in(pm, impl.plugin)) for x in (paths or []))
    return out


def _resolved(folder: Any, base: str | None) -> str:
    """A plugin's library folder as a string, a relative one joined to ``base`` (the current folder when
    the plugin was registered; ``None``: left as it is, relative to the current folder)."""
    text = path_str(folder)
    return text if base is None or os.path.isabs(text) else path_join(base, text)


def _bad_folders(paths: Any) -> str | None:
    """Why what a ``serq_frontend_library_paths`` implementation returned is not a list of folders."""
    if paths is None:
        return None
    if not isinstance(paths, (list, tuple)):
        return f"it returned {_shown(paths)}, not a list of folders (str or os.PathLike)"
    for x in paths:
        try:
            # (an os.PathLike whose __fspath__ gives bytes, or raises, was a TypeError traceback from pathlib)
            text = os.fspath(x) if isinstance(x, (str, os.PathLike)) else None
        except Exception as e:  # noqa: BLE001 - the plugin's object's own failure, named with it
            return f"it returned the folder {_shown(x)}, whose __fspath__ raised {type(e).__name__}: {e}"
        if text is not None and not isinstance(text, str):
            return f"it returned the folder {_shown(x)}, whose __fspath__ gave {_shown(text)}, not a str"
        if not text:
            return f"it returned the folder {_shown(x)}: a folder is a non-empty str or os.PathLike"
    return None


def _shown(obj: Any) -> str:
    if obj is None or isinstance(obj, (bool, int, float, str)):
        text = repr(obj)
        return text if len(text) <= 60 else text[:57] + "..."
    return f"an object of type {type(obj).__name__}"


def _folders_failure(pm: Any, hook: Any) -> Exception:
    """The error of the implementation of ``serq_frontend_library_paths`` that returned what is not a list
    of folders: each is asked again, alone, to find it."""
    from serq.errors import PluginError
    from serq.plugins import plugin_message

    for impl in hook.get_hookimpls():
        why = _bad_folders(impl.function())
        if why is not None:
            return PluginError(plugin_message(pm, impl.plugin, "failed in serq_frontend_library_paths", reason=why))
    return PluginError("error: serq_frontend_library_paths: a plugin returned what is not a list of folders")


#: :func:`_sources`'s answer, made once per process
_SOURCES: list[Any] = []
def _sources() -> list[Any]:
    """The size and modification time of every ``.py`` and ``.lark`` file of serq-frontend, serq-ir and serq
    (the host's messages and their formatting, which a compile's warnings are written in): an edited
    checkout, whose versions stay as they were, is a miss. Made once per process: the code a process runs
    is what it imported (some 0.3 ms)."""
    if not _SOURCES:
        import serq
        import serq_ir

        import serq_frontend

        _SOURCES[:] = [_tree(os.path.dirname(os.path.abspath(m.__file__ or "")))
                       for m in (serq_frontend, serq_ir, serq)]
    return _SOURCES


def _versions() -> dict[str, Any]:
    """The installed distributions whose code a compile runs, by their ``*.dist-info`` names (which hold
    the versions): every serq and serq-* one (``serq``, ``serq-frontend``, ``serq-sim``, a third party's
    ``serq-foo``), lark and msgspec. From the scan that found the plugins (serq.plugins.installed_distributions:
    no second look at ``sys.path``)."""
    from serq.plugins import Distribution, _Unusual, installed_distributions, normalize_name

    try:
        found = {k: _dist_label(Distribution(v)) for k, v in installed_distributions().items()
                 if k in _DISTRIBUTIONS or k == "serq" or k.startswith("serq_")}
        return {**dict.fromkeys(_DISTRIBUTIONS), **found}
    except _Unusual:  # (a zip or an egg on sys.path: importlib.metadata, slower)
        import importlib.metadata

        out: dict[str, Any] = dict.fromkeys(_DISTRIBUTIONS)
        for dist in importlib.metadata.distributions():
            k = normalize_name(dist.metadata["Name"] or "")
            if (k in _DISTRIBUTIONS or k == "serq" or k.startswith("serq_")) and out.get(k) is None:
                out[k] = _dist_label(dist)
        return out


def compute_key(name: str, real: str, text: str, sets: Mapping[str, float], defs: Mapping[str, str],
                pm: Any, library_paths: list[Path] | list[str] | None = None) -> str:
    """The key of one compile (see the module's documentation). :func:`load` gives no ``library_paths``: the
    library folders are asked for only by a compile that reads a ``use``, and such a compile's entry holds
    them among its deps (:meth:`Recorder.library_folders`), checked at a hit."""
    import serq_ir

    parts = {
        "format": FORMAT,
        "python": [sys.version, sys.implementation.cache_tag],
        "ir_version": serq_ir.IR_VERSION,
        "sources": _sources(),
        "distributions": _versions(),
        "plugins": _plugins(pm),
        "layers": _layers(pm),
        **({} if library_paths is None else {"library_paths": [str(p) for p in library_paths]}),
        "program": [name, real, _text_digest(text)],
        "sets": sorted([k, repr(v)] for k, v in sets.items()),
        "defs": sorted([k, v] for k, v in defs.items()),
    }
    return _digest(json.dumps(parts, sort_keys=True).encode())


# ---------------------------------------------------------------------------------------------------
# Recording a compile, checking an entry
# ---------------------------------------------------------------------------------------------------


class Recorder:
    """What one compile looked for and read (``Context.recorder``), checked again on a hit."""

    def __init__(self) -> None:
        self.deps: list[list[Any]] = []
        #: the sugar layers the compile applied (set by the compile)
        self.layers: list[Any] = []

    def library_folders(self, folders: list[str]) -> None:
        """The library folders the compile asked for (at its first ``use``, before any candidate there): a hit
        asks for them again, and other folders are a miss (a library may be found elsewhere)."""
        self.deps.append(["library_paths", list(folders)])

    def candidate(self, path: Path, real: Path | None) -> None:
        """A path a ``use`` looked at: not a file (``real`` None), or a file resolving to ``real``."""
        self.deps.append(["candidate", str(path), None if real is None else str(real)])

    def same(self, path: Path, first: str) -> None:
        """A library ``path`` is the file read already as ``first`` (a hard link to it), so not read again."""
        self.deps.append(["same", str(path), first])

    def read(self, path: Path, text: str) -> None:
        """A file the compile read (its text as decoded)."""
        self.deps.append(["read", str(path), _text_digest(text)])

    def layer_modules(self) -> list[list[Any]]:
        """The files of the modules the sugar layers' functions come from, outside serq-frontend (whose
        files are part of the key)."""
        import serq_frontend

        own = os.path.dirname(os.path.abspath(serq_frontend.__file__)) + os.sep
        files: dict[str, None] = {}
        for layer in self.layers:
            for f in (layer.rewrite, *layer.builders.values()):
                module = sys.modules.get(getattr(f, "__module__", None) or "")
                path = getattr(module, "__file__", None)
                if path and not os.path.abspath(path).startswith(own):
                    files[path] = None
        return [["module", *(_stamp(f) or [])] for f in files]


def _asks_folders(deps: Any) -> bool:
    """Whether an entry's ``deps`` hold the library folders (its compile read a ``use``)."""
    return isinstance(deps, list) and any(isinstance(d, list) and d[:1] == ["library_paths"] for d in deps)


def _holds(deps: Any, folders: list[str] | None = None) -> bool:
    """Whether every recorded candidate, file and module is as it was, and the library folders the compile
    asked for are ``folders`` (the folders now, given when :func:`_asks_folders`)."""
    if not isinstance(deps, list):
        return False
    try:
        for d in deps:
            kind = d[0]
            if kind == "library_paths":
                if folders is None or d[1] != folders:
                    return False
            elif kind == "candidate":
                p = path_str(d[1])
                if (path_resolved(p) if path_is_file(p) else None) != d[2]:
                    return False
            elif kind == "read":
                try:
                    text = _read_text(d[1])
                except (OSError, UnicodeDecodeError):
                    return False
                if text.startswith("\ufeff"):  # a byte-order mark: the compile read the text without it
                    text = text[1:]
                if _text_digest(text) != d[2]:
                    return False
            elif kind == "same":
                if not os.path.samefile(path_str(d[1]), path_str(d[2])):
                    return False
            elif kind == "module":
                if _stamp(d[1]) != d[1:]:
                    return False
            else:
                return False
    except (TypeError, IndexError, ValueError, OSError, RuntimeError):
        return False
    return True


def _read_text(path: str | os.PathLike[str]) -> str:
    """The text of a source, of a regular file only (:func:`serq.files.read_input`: a FIFO does not block
    the lookup), as the compile reads it: UTF-8 with its line ends as they are. (It was read with Python's
    universal newlines, which make a lone carriage return a line end, so a file of CR line ends compiled
    with the cache as lines the parser does not see: a comment, CR, ``let x = 1;`` is one comment.) A file
    of more than ``MAX_SOURCE`` bytes is an ``OSError``: the compile says why."""
    return read_input(path_str(path), limit=MAX_SOURCE).decode("utf-8")


def _read_entry(file: str | os.PathLike[str], key: str) -> tuple[dict[str, Any], bytes] | None:
    """The header and the IR of an entry, or None when it is missing, corrupt or of another key."""
    data = read_trusted(file)
    if data is None or not data.startswith(_MAGIC):
        return None
    digest, _, body = data[len(_MAGIC):].partition(b"\n")
    if digest != _digest(body).encode():
        return None
    head, _, ir = body.partition(b"\n")
    try:
        header = json.loads(head)
    except (ValueError, RecursionError):  # (arrays nested some 100 000 deep: the decoder's recursion)
        return None
    if (not isinstance(header, dict) or header.get("key") != key or not isinstance(header.get("stderr"), str)
            or not replayable(header["stderr"])):
        return None
    return header, ir


#: the most characters of what a compile wrote on stderr that an entry keeps, and a hit writes again
MAX_STDERR = 1 << 20


def replayable(text: str) -> bool:
    """Whether ``text``, what an entry says its compile wrote on stderr, is what a hit may write again: at most
    :data:`MAX_STDERR` characters, and lines of printable characters (:func:`serq.errors.printable_lines`
    leaves it as it is, as it leaves every diagnostic the compile writes). An entry is data: one whose text
    is not (a terminal's escape sequences, a carriage return that writes over a line, megabytes) is a miss,
    compiled again, and what the compile writes is what is said; such a text is not stored (:func:`load`).
    A hit wrote whatever the entry held (a crafted entry, or one copied from elsewhere, drove the terminal)."""
    from serq.errors import printable_lines

    return len(text) <= MAX_STDERR and printable_lines(text) == text


def _entry(key: str, deps: list[list[Any]], stderr: str, ir: bytes) -> bytes:
    body = json.dumps({"key": key, "deps": deps, "stderr": stderr}).encode() + b"\n" + ir
    return _MAGIC + _digest(body).encode() + b"\n" + body


class _Tee:
    """``sys.stderr`` while compiling: writes go through, and those of the compiling thread are kept.

    Compiles in several threads each put theirs over what ``sys.stderr`` is then, and end in any order:
    one that put it back only when its own was still there (A begins, B begins, A ends, B ends put A's
    back) left a tee as the process's ``sys.stderr`` for good, keeping every later write, and a tee kept
    the other thread's writes, which its entry then wrote again at every hit. So a tee keeps its own
    thread's writes only, and the one that ends takes every ended tee off the top (:func:`_tee_off`)."""

    def __init__(self, stream: Any):
        self._stream = stream
        self._owner = _thread.get_ident()
        self._ended = False
        self.parts: list[str] = []

    def write(self, s: str) -> int:
        if not self._ended and _thread.get_ident() == self._owner:
            self.parts.append(s)
        return self._stream.write(s) if self._stream is not None else len(s)

    def flush(self) -> None:
        if self._stream is not None:
            self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


#: held while ``sys.stderr`` is swapped for a tee or back
_SWAP = _thread.allocate_lock()


def _tee_on(tee: _Tee) -> None:
    """Put ``tee`` (made by the caller before its ``try``, whose ``finally`` takes it off) over
    ``sys.stderr``, of which it takes the stream there now."""
    with _SWAP:
        tee._stream = sys.stderr
        sys.stderr = tee


def _tee_off(tee: _Tee) -> None:
    """Take ``tee`` off, and every ended one above the stream it covers (one that was never put on is only
    ended)."""
    with _SWAP:
        tee._ended = True
        while isinstance(sys.stderr, _Tee) and sys.stderr._ended:
            sys.stderr = sys.stderr._stream


# ---------------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------------


def load(path: str | Path, *, sets: Mapping[str, float] | None = None, defs: Mapping[str, str] | None = None,
         pm: Any = None, option_name: Any = None) -> Any:
    """Compile ``path`` (as :func:`serq_frontend.compile`), through the compile cache when it is on.
    ``option_name`` names an override in a message (serq.loading.option_given for a command's ``--set``;
    the Python API's ``sets['NAME']`` by default). (The compile, the IR's encoding for the cache and a hit's
    decoding each raise the collector's threshold: serq.shared.collector_raised.)"""
    import serq_frontend

    serq_frontend.check_path(path, "load()")
    sets, defs = serq_frontend.check_overrides(serq_frontend._given(sets), serq_frontend._given(defs))
    pm = serq_frontend._default_pm(pm)
    # paths as strings, as pathlib gives them (serq.files.path_str): a hit imports no pathlib
    folder = _cache_folder() if enabled() and not _unstored[0] else None
    if folder is None:
        return serq_frontend._compile(path, None, sets, defs, pm, option_name=option_name)
    name = str(path)
    try:
        text = _read_text(path)
        real = path_resolved(path)
    except (OSError, UnicodeDecodeError, RuntimeError):  # the compile says why
        return serq_frontend._compile(path, None, sets, defs, pm, option_name=option_name)
    from serq.plugins import plugin_exits

    # The library folders (SERQ_PATH and the plugins' serq_frontend_library_paths) are asked for when they are
    # needed, once: by the compile at its first `use`, or at a hit of an entry whose compile asked for them.
    # A program that uses no library needs none: a plugin's hook that raised (or called sys.exit()) refused
    # every load, where serq_frontend.compile asks it at a `use` only. When they are needed, such a hook, or
    # one that returns what is not a list of folders, is the plugin's one message.
    asked: list[list[str]] = []

    def lib_folders() -> list[str]:
        if not asked:
            with plugin_exits(pm, "the compile"):
                asked.append(_library_folders(pm))
        return asked[0]

    try:
        key = compute_key(name, real, text, sets, defs, pm)
    except _NoKey:  # a plugin's sugar hook that raises: the compile names it
        return serq_frontend._compile(path, None, sets, defs, pm, option_name=option_name)
    file = path_join(folder, f"compile-{key[:40]}.bin")

    found = _read_entry(file, key)
    if found is not None and _holds(found[0].get("deps"),
                                    lib_folders() if _asks_folders(found[0].get("deps")) else None):
        import serq_ir

        try:
            # the schema alone: a compile's IR is not validated either (serq_sim.run validates what it
            # runs, a fresh compile's as a hit's), so a hit gives what the compile gave
            program = serq_ir.decode(found[1], name=name, check=False)
        except Exception:  # noqa: BLE001 - an entry that does not decode is a miss, never an error
            program = None
        if program is not None:
            if found[0]["stderr"] and sys.stderr is not None:
                sys.stderr.write(found[0]["stderr"])
                sys.stderr.flush()
            return program

    from pathlib import Path

    recorder = Recorder()

    def library_paths() -> list[Path]:  # (the compile's first `use` asks)
        folders = lib_folders()
        recorder.library_folders(folders)
        return [Path(p) for p in folders]

    # made before the try and put on within it: Ctrl-C's KeyboardInterrupt, handled as the tee had just been
    # put on (before the try), left it as the process's standard error for good, keeping every later write
    tee = _Tee(None)
    try:
        _tee_on(tee)
        program = serq_frontend._compile(path, None, sets, defs, pm, text=text, library_paths=library_paths,
                                         recorder=recorder, option_name=option_name)
    finally:
        _tee_off(tee)
    said = "".join(tee.parts)
    if replayable(said):  # (else not kept: a hit could not write it again, and each load compiles, as now)
        store(Path(file), key, recorder.deps + recorder.layer_modules(), said, program)
    return program


#: how many :class:`unstored` blocks are open
_unstored = [0]


class unstored:  # noqa: N801 - used as a block, as contextlib's are
    """A block whose compiles (:func:`load`) do not use the cache: they neither look an entry up nor write
    one. A sweep compiles each of its points in one (serq_sweep.core.compile_point, a point given ``--set``
    or ``--def`` values): an entry a point, written and synced (some 25 ms each), made a sweep of 10 000
    points spend minutes writing the cache, and its entries pushed every other program's out of it
    (:data:`KEEP`), for points compiled again only by a resume of the same sweep; the key of each, a miss
    but for a ``serq run`` of the same values, cost 4 ms more (the installed distributions looked up)."""

    def __enter__(self) -> None:
        _unstored[0] += 1

    def __exit__(self, *exc: object) -> None:
        _unstored[0] -= 1


def store(file: Path, key: str, deps: list[list[Any]], stderr: str, program: Any) -> None:
    """Write an entry atomically; a cache that cannot be written is no error."""
    import serq_ir

    write_trusted(file, _entry(key, deps, stderr, serq_ir.encode(program)))
    prune(file.parent)


def is_entry_name(name: str) -> bool:
    """Whether ``name`` is that of an entry: ``compile-`` and the 40 lowercase hex digits of its key's head,
    then ``.bin`` (:func:`load`). Only such files are pruned: a ``SERQ_CACHE_DIR`` that names a folder of the
    user's own, holding files of theirs that begin with ``compile-`` and end in ``.bin`` (compile-notes.bin),
    lost the oldest of them to a prune, as if they were entries."""
    return (len(name) == 52 and name.startswith("compile-") and name.endswith(".bin")
            and all(c in "0123456789abcdef" for c in name[8:48]))


def prune(folder: Path, keep: int = KEEP) -> None:
    """When the folder holds more than ``keep`` entries (:func:`is_entry_name`), remove the oldest written
    down to 3/4 of it; no other file of the folder is counted or removed."""
    try:
        found = [e for e in os.scandir(folder) if is_entry_name(e.name)]
        if len(found) <= keep:
            return
        aged = sorted((e.stat().st_mtime_ns, e.path) for e in found)
    except OSError:
        return
    for _, path in aged[: len(found) - keep * 3 // 4]:
        try:
            os.unlink(path)
        except OSError:
            pass
