"""Building the plugin manager, and the registries that collect what plugins register.

Start-up order (as pytest and tox do it): add the host's specs, then block the plugins named in
``SERQ_DISABLED_PLUGINS`` (comma-separated entry-point names), then load the ``serq`` entry points
unless ``SERQ_DISABLE_PLUGIN_AUTOLOAD`` switches that off (:mod:`serq.switches`), then let each part add its specs
(``serq_addhooks``, historic), then ``check_pending()``.

The entry points are found by a small scanner of ``sys.path`` (:func:`entry_points`) rather than
``importlib.metadata``, whose import alone (email, zipfile, csv, pathlib) is a good part of a short run's
start-up. It keeps ``importlib.metadata``'s rules and falls back to it for any path it does not handle.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import threading
import types
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pluggy

from . import extensions as _extensions
from . import hookspecs
from .errors import PluginError, clipped, printable
from .switches import switch

ENTRY_POINT_GROUP = "serq"


# ---------------------------------------------------------------------------------------------------
# Finding the entry points
# ---------------------------------------------------------------------------------------------------


class _Unusual(Exception):
    """Something on ``sys.path`` the scanner leaves to ``importlib.metadata`` (a zip file, an egg…)."""


class _Malformed(Exception):
    """A line of the ``[serq]`` section of a distribution's ``entry_points.txt`` that is no ``name = value``
    (``importlib.metadata`` fails on it with a TypeError of its own), or is not UTF-8 text: its message
    says which."""


class BadEntryPoint(ValueError):
    """An entry point's value (or a :class:`serq.cli.LazyCommand`'s target) that is not ``module`` or
    ``module:attribute``: :func:`load_object` raises it, and its caller names the plugin."""


_SEPARATORS = str.maketrans("-.", "__")


def normalize_name(name: str) -> str:
    """A distribution name as ``importlib.metadata`` compares them (PEP 503, dashes as underscores)."""
    out = name.translate(_SEPARATORS).lower()
    if "__" not in out:  # no run of separators: each one is one underscore (no regular expression compiled)
        return out
    import re

    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


class Distribution:
    """An installed distribution found by the scanner: its ``*.dist-info`` (or ``*.egg-info``) folder.

    It offers what serQ and pluggy's ``DistFacade`` ask of an ``importlib.metadata.Distribution``
    (``metadata``, ``name``, ``version``, ``project_name``, ``read_text``); the metadata file is read
    only when one of them is first asked for."""

    __slots__ = ("_path", "_meta")

    def __init__(self, path: str):
        self._path = path
        self._meta: _Headers | None = None

    @property
    def path(self) -> str:
        """The ``*.dist-info`` or ``*.egg-info`` folder (or file)."""
        return self._path

    def read_text(self, filename: str) -> str | None:
        """A metadata file's text, or ``None`` when it is not there (as ``importlib.metadata``). Its bytes
        that are not UTF-8 are read as lone surrogates (``surrogateescape``), so that a file of another
        encoding is read (a distribution's ``entry_points.txt`` is read for its ``[serq]`` section only,
        and ``METADATA`` only for a message); a file that is not a regular one (a FIFO, whose read would
        wait for ever; a device, ``/dev/zero``, whose read would never end), one of more than
        :data:`MAX_METADATA` bytes, or one that cannot be read (a loop of symbolic links) is an
        ``OSError`` whose ``strerror`` says why: each is read at every start of ``serq``."""
        path = os.path.join(self._path, filename) if filename else self._path
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError):
            return None
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                return None
            if not stat.S_ISREG(st.st_mode):
                mode = st.st_mode
                kind = ("a FIFO (a named pipe)" if stat.S_ISFIFO(mode) else "a character device"
                        if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else "a socket"
                        if stat.S_ISSOCK(mode) else "not a regular file")
                raise OSError(errno.EINVAL, f"it is {kind}, not a file", path)
            too_big = OSError(errno.EFBIG, f"it is more than {MAX_METADATA // 2**20} MB", path)
            if st.st_size > MAX_METADATA:
                raise too_big  # (unread)
            parts: list[bytes] = []
            total, want = 0, st.st_size + 1  # what it holds, and a byte to see it grow
            while total <= MAX_METADATA:
                piece = os.read(fd, min(want, MAX_METADATA + 1 - total))
                if not piece:
                    break
                parts.append(piece)
                total += len(piece)
                want = 2**16
            if total > MAX_METADATA:
                raise too_big
        finally:
            os.close(fd)
        return b"".join(parts).decode("utf-8", "surrogateescape")

    @property
    def metadata(self) -> _Headers:
        """The header fields of ``METADATA`` (``PKG-INFO`` for an egg), keyed in lower case; the first of
        a repeated field. ``metadata["Name"]`` and ``metadata["name"]`` both work; a missing field is
        ``None`` (every field is, when the file cannot be read: it is read for messages only). A byte that
        is not UTF-8 is shown as ``\\xNN``."""
        if self._meta is None:
            try:
                text = self.read_text("METADATA") or self.read_text("PKG-INFO") or self.read_text("") or ""
            except OSError:
                text = ""
            self._meta = _headers(_bytes_shown(text))
        return self._meta

    @property
    def name(self) -> str | None:
        return self.metadata["Name"]

    @property
    def project_name(self) -> str | None:
        return self.metadata["Name"]

    @property
    def version(self) -> str | None:
        return self.metadata["Version"]

    def __repr__(self) -> str:
        return f"<serq.plugins.Distribution {self._path!r}>"


#: the most bytes a distribution's metadata file (``METADATA``, ``entry_points.txt``) may have
MAX_METADATA = 16 * 2**20


def _bytes_shown(text: str) -> str:
    """``text`` read with ``surrogateescape``, each byte that was not UTF-8 as ``\\xNN``."""
    if text.isascii():
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


class _Headers(dict):
    """Header fields keyed in lower case, looked up in any case; a missing one is ``None``."""

    def __getitem__(self, key: str) -> Any:
        return dict.get(self, key.lower())

    def get(self, key: str, default: Any = None) -> Any:
        return dict.get(self, key.lower(), default)

    def __contains__(self, key: object) -> bool:
        return isinstance(key, str) and dict.__contains__(self, key.lower())


def _headers(text: str) -> _Headers:
    """The RFC 822 header block at the top of a metadata file (continuation lines joined)."""
    out = _Headers()
    key = None
    for line in text.splitlines():
        if not line.strip():
            break
        if line[0] in " \t":
            if key is not None:
                dict.__setitem__(out, key, f"{dict.__getitem__(out, key)}\n{line.strip()}")
            continue
        name, sep, value = line.partition(":")
        key = name.strip().lower() if sep else None
        if key is None or dict.__contains__(out, key):  # a repeated field keeps its first value
            key = None
            continue
        dict.__setitem__(out, key, value.strip())
    return out


def _path_metadata_finder(finder) -> bool:
    """The ``importlib_metadata`` backport's finder (installed on ``sys.meta_path`` when that package is
    imported, by Dask for one): it finds the ``.dist-info`` folders on ``sys.path``, as the standard
    library's path finder does, so it finds nothing the scan does not."""
    t = type(finder)
    return t.__name__ == "MetadataPathFinder" and t.__module__.split(".")[0] == "importlib_metadata"


def _distribution_paths() -> Iterable[tuple[str, str]]:
    """``(normalized name, metadata folder)`` of every distribution on ``sys.path``, in the order
    ``importlib.metadata.distributions()`` gives them."""
    import importlib.machinery

    for finder in sys.meta_path:
        if finder is not importlib.machinery.PathFinder and hasattr(finder, "find_distributions") and \
                not _path_metadata_finder(finder):
            raise _Unusual(f"a finder of distributions on sys.meta_path: {finder!r}")
    for entry in list(sys.path):
        if not isinstance(entry, str):
            raise _Unusual(f"sys.path entry {entry!r}")
        root = entry or "."
        try:
            children = os.listdir(root)
        except (FileNotFoundError, PermissionError):
            continue
        except OSError:
            if os.path.isfile(root):
                raise _Unusual(f"{entry}: a file on sys.path (a zip?)") from None
            continue
        if os.path.basename(entry).lower().endswith(".egg"):
            raise _Unusual(f"{entry}: an egg on sys.path")
        groups: dict[str, list[str]] = {}
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                if not child.endswith((".dist-info", ".egg-info")):
                    raise _Unusual(f"{child}: upper-case suffix")
                name = low.rpartition(".")[0].partition("-")[0]
                groups.setdefault(normalize_name(name), []).append(child)
        for norm, childs in groups.items():
            for child in childs:
                yield norm, os.path.join(entry, child)


def _parse_entry_points(text: str, group: str) -> list[tuple[str, str]]:
    """``(name, value)`` of the ``[group]`` section of an ``entry_points.txt``, as
    ``importlib.metadata`` reads it."""
    out = []
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line.strip("[]")
            continue
        if section is None:
            continue
        name, sep, value = line.partition("=")
        if section != group:  # (another group's lines are not read: a bad one there is not serQ's to judge)
            continue
        if not line.isascii():
            try:
                line.encode("utf-8")
            except UnicodeEncodeError as e:  # a byte that is not UTF-8, read as a lone surrogate
                byte = ord(line[e.start]) - 0xDC00
                raise _Malformed(f"the line '{_bytes_shown(line)}' of its [{group}] section is not UTF-8 text "
                                 f"(byte 0x{byte:02X})") from None
        if not sep or not name.strip():
            raise _Malformed(f"the line {line!r} of its [{group}] section is not `name = value`")
        out.append((name.strip(), value.strip()))
    return out


def entry_points(group: str = ENTRY_POINT_GROUP) -> list[tuple[str, str, Distribution]]:
    """``(name, value, distribution)`` of every entry point of ``group``, in the order and with the rules
    of ``importlib.metadata.entry_points(group=group)``: the distributions on ``sys.path`` in order, the
    first of each normalized name wins and later ones of that name are skipped.

    :raises _Unusual: something on the path the scanner does not handle (the caller falls back to
        ``importlib.metadata``).
    """
    out = []
    for path in _scan().values():
        dist = Distribution(path)
        try:
            text = dist.read_text("entry_points.txt")
        except OSError as e:  # what it offers is not known without it: no command runs as if it offered nothing
            raise PluginError(_unreadable_entry_points(dist, e.strerror or str(e))) from None
        if text:
            try:
                out.extend((name, value, dist) for name, value in _parse_entry_points(text, group))
            except _Malformed as e:
                raise PluginError(_unreadable_entry_points(dist, str(e))) from None
    return out


#: the last whole scan of the distributions: ``[sys.path as it was, {normalized name: metadata folder}]``
#: (:func:`installed_distributions`)
_SCANNED: list[Any] = []


def installed_distributions() -> dict[str, str]:
    """``{normalized name: metadata folder}`` of every distribution on ``sys.path``, the first of each name
    (as :func:`entry_points` takes them). The scan the plugins' entry points were last found by, when
    ``sys.path`` is as it was then: a command scans once, not again for the compile cache's key (some
    0.6 ms); otherwise a new scan, kept so.

    :raises _Unusual: something on the path the scanner does not handle.
    """
    if _SCANNED and _SCANNED[0] == sys.path:
        return _SCANNED[1]
    return _scan()


def _scan() -> dict[str, str]:
    """A new scan of the distributions on ``sys.path``: ``{normalized name: metadata folder}``, the first of
    each name, in the path's order (the order :func:`entry_points` reads them in); kept as the last
    (:data:`_SCANNED`).

    :raises _Unusual: something on the path the scanner does not handle.
    """
    where = list(sys.path)
    seen: dict[str, str] = {}
    for norm, path in _distribution_paths():
        seen.setdefault(norm, path)
    _SCANNED[:] = [where, seen]
    return seen


def _unreadable_entry_points(dist: Any, why: str) -> str:
    """The message of a distribution whose ``entry_points.txt`` cannot be read (no plugin of it can be
    named: which one the bad line meant is not known)."""
    project = getattr(dist, "project_name", None)
    version = getattr(dist, "version", None)
    this = f"{project} {version}" if project and version else project or "a distribution"
    where = getattr(dist, "path", None)
    file = f" ({os.path.join(where, 'entry_points.txt')})" if isinstance(where, str) else ""
    hint = f"(run without it: uninstall {project or 'it'})"
    return f"{printable(f'error: the entry points of {this} cannot be read{file}: {why}')}\n{printable(hint)}"


def find_distributions(names: Iterable[str]) -> dict[str, Any]:
    """``{name: distribution or None}``: the installed distribution of each name (the first on
    ``sys.path``), a :class:`Distribution`, or an ``importlib.metadata`` one when the scanner cannot read
    the path. One pass over ``sys.path`` for all the names."""
    wanted = {normalize_name(n): n for n in names}
    out: dict[str, Any] = dict.fromkeys(wanted.values())
    left = len(wanted)
    try:
        for norm, path in _distribution_paths():
            name = wanted.get(norm)
            if name is not None and out[name] is None:
                out[name] = Distribution(path)
                left -= 1
                if not left:
                    break
        return out
    except _Unusual:
        import importlib.metadata

        for name in wanted.values():
            try:
                out[name] = importlib.metadata.distribution(name)
            except importlib.metadata.PackageNotFoundError:
                out[name] = None
        return out


def find_distribution(name: str) -> Any:
    """The installed distribution ``name`` (see :func:`find_distributions`), or ``None``."""
    return find_distributions([name])[name]


def load_object(value: str) -> Any:
    """What an entry point's value (``module``, ``module:attr``, ``module:attr.attr [extras]``) names,
    as ``importlib.metadata.EntryPoint.load`` finds it."""
    import importlib

    module, colon, attr = value.partition(":")
    if not (module and (attr or not colon) and _PLAIN.issuperset(module) and _PLAIN.issuperset(attr)):
        import re  # anything but `module` or `module:attr` in plain letters (no regular expression compiled)

        match = re.match(r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$", value)
        if match is None:
            raise BadEntryPoint(f"{value!r} is not `module` or `module:attribute`")
        module, attr = match.group("module"), match.group("attr") or ""
    obj = importlib.import_module(module)
    for name in attr.split("."):
        if name:
            obj = getattr(obj, name)
    return obj


_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


_ModuleType = types.ModuleType
#: the names a module's type (and object) defines: a module's own value of one may be shadowed by a
#: descriptor there, which pluggy's static lookup follows
_MODULE_TYPE_NAMES = frozenset(name for cls in _ModuleType.__mro__ for name in vars(cls))
#: what pluggy's static lookup takes for a hook implementation from a module's namespace (anything else it
#: passes over): a function, a staticmethod or classmethod object, a bound method
_HOOKABLE = (types.FunctionType, staticmethod, classmethod, types.MethodType)
_ABSENT = object()


class PluginManager(pluggy.PluginManager):
    """pluggy's manager, which also lists the plugins the scanner loaded in
    ``list_plugin_distinfo()`` and ``list_plugin_distributions()`` (with a :class:`Distribution` each,
    which answers ``project_name``, ``version`` and ``metadata`` as pluggy's ``DistFacade`` does)."""

    def __init__(self, project_name: str = "serq"):
        super().__init__(project_name)
        self._scanned_distinfo: list[tuple[Any, Distribution]] = []
        #: the entry-point names :func:`load_entry_points` found (blocked ones included)
        self.entry_names: set[str] = set()
        #: the names of ``SERQ_DISABLED_PLUGINS`` no plugin has (a misspelling blocks nothing): set by
        #: :func:`get_plugin_manager` when it loaded the entry points, for the command to say so
        self.unknown_disabled: list[str] = []
        #: (plugin, name) of the functions named like a hook that carry no ``@serq.hookimpl`` marker
        self.unmarked: list[tuple[Any, str]] = []
        #: id(plugin) -> the current folder when it was registered (:func:`registered_in`)
        self.folders: dict[int, str | None] = {}

    def register(self, plugin: Any, name: str | None = None) -> str | None:
        """pluggy's, noting the current folder at the registration (:func:`registered_in`)."""
        try:
            here: str | None = os.getcwd()
        except OSError:  # the current folder was removed: none to resolve against
            here = None
        got = super().register(plugin, name)
        if got is not None:
            self.folders[id(plugin)] = here
        return got

    def unregister(self, plugin: Any = None, name: str | None = None) -> Any:
        gone = super().unregister(plugin, name)
        self.folders.pop(id(gone), None)
        return gone

    def parse_hookimpl_opts(self, plugin: Any, name: str) -> Any:
        """pluggy's, which skips a function without serQ's marker; one named like a hook (``serq_…``) is
        noted (:attr:`unmarked`): when a hook of that name is specified, :func:`get_plugin_manager` names
        the plugin, since serQ would never call it (its registrations silently missing).

        A plugin that is a module (as every entry point's is) has most of its names bound to what no hook
        can be (its dunders, the modules and constants it imports): such a name is passed over here, as
        pluggy passes it over, without pluggy's static lookup through the module's type (four fifths of
        building the plugin manager)."""
        if type(plugin) is _ModuleType and name not in _MODULE_TYPE_NAMES:
            value = plugin.__dict__.get(name, _ABSENT)
            if value is not _ABSENT and not isinstance(value, _HOOKABLE):
                return None
        opts = super().parse_hookimpl_opts(plugin, name)
        if opts is not None and isinstance(plugin, type):
            _refuse_unbound(plugin, name)
        if opts is None and name.startswith("serq_"):
            import inspect

            attr = inspect.getattr_static(plugin, name, None)
            if inspect.isfunction(attr) or isinstance(attr, (staticmethod, classmethod)):
                self.unmarked.append((plugin, name))
        return opts

    def list_plugin_distinfo(self) -> list[tuple[Any, Any]]:
        return [*super().list_plugin_distinfo(), *self._scanned_distinfo]

    def list_plugin_distributions(self) -> list[tuple[Any, Any]]:
        base = getattr(super(), "list_plugin_distributions", None)
        return [*(base() if base is not None else []), *self._scanned_distinfo]


def _refuse_unbound(cls: type, name: str) -> None:
    """A plugin that is a class (an entry point ``module:Plugin``) whose hook implementation ``name`` is a plain
    method: pluggy takes its parameters after ``self`` and calls the class's function without an instance,
    a TypeError in pluggy's own code (``missing 1 required positional argument: 'register'``) when the hook
    is first called, a traceback naming no plugin. Refused when it is registered, at the method's line."""
    import inspect

    attr = inspect.getattr_static(cls, name, None)
    if not inspect.isfunction(attr):  # a staticmethod or classmethod is called as it should be
        return
    e = pluggy.PluginValidationError(
        cls, f"the hook {name} is a method of the class {cls.__qualname__}, which serQ calls without an instance: "
             f"a plugin is an instance of it (plugin = {cls.__qualname__}()), or the hook is a @staticmethod")
    code = getattr(inspect.unwrap(attr), "__code__", None)
    if code is not None:
        e.serq_at = (code.co_filename, code.co_firstlineno)
    raise e


#: serQ's own distributions, whose entry points are registered first and in this order, before any other
#: plugin's (which follow in ``sys.path`` order): registration order is what orders what the register
#: hooks collect (sugar layers apply in it), so the parts' own come first whatever the file system lists
FIRST_PARTY = ("serq", "serq-ir", "serq-frontend", "serq-sim", "serq-report", "serq-vllm", "serq-sweep")


_FIRST_PARTY_RANK = {normalize_name(n): i for i, n in enumerate(FIRST_PARTY)}


def _first_party_rank(dist: Any) -> tuple[int, str]:
    """Where a distribution's plugins come in the order of registration: serQ's own parts in the order of
    :data:`FIRST_PARTY`, then every other in the order of its (normalized) name. Not in the order the
    scanner finds them: that is the order the file system lists a folder's entries in (``os.listdir``,
    as ``importlib.metadata`` reads them), which differs from one file system to another, and the order
    of registration is the order the hooks are called in (which library folder a ``use`` finds first, the
    order sugar layers apply). The name is read from the metadata folder's name, so a third party's
    metadata is read only when a message needs it."""
    path = getattr(dist, "path", None)
    if isinstance(path, str):
        name = os.path.basename(path).rpartition(".")[0].partition("-")[0]
    else:  # an importlib.metadata distribution
        name = (dist.metadata["Name"] if dist is not None else None) or ""
    norm = normalize_name(name)
    rank = _FIRST_PARTY_RANK.get(norm)
    return (rank, "") if rank is not None else (len(FIRST_PARTY), norm)


def load_entry_points(pm: pluggy.PluginManager, group: str = ENTRY_POINT_GROUP) -> int:
    """Import and register every plugin of the entry-point group ``group``, as pluggy's
    ``load_setuptools_entrypoints`` does (a blocked name, or one the caller registered before, is
    skipped; a name two distributions' entry points give is an error naming both: pluggy skips the
    second, silently), with
    the scanner; through ``importlib.metadata`` when the scanner cannot read ``sys.path``. serQ's own
    parts (:data:`FIRST_PARTY`) are registered first, in that order; the others follow in the order of
    their distributions' names, each distribution's in the order its ``entry_points.txt`` lists them
    (:func:`_first_party_rank`). Returns the number of plugins registered."""
    try:
        found = entry_points(group)
    except _Unusual:
        found = _metadata_entry_points(group)
    # the scanner names a part's distribution by its folder (no metadata read for a third party's)
    found.sort(key=lambda f: _first_party_rank(f[2]))  # stable: a distribution's keep their file's order
    count = 0
    loaded: set[str] = set()
    seen = getattr(pm, "entry_names", None)
    for name, value, dist in found:
        if seen is not None:
            seen.add(name)
        if pm.is_blocked(name):
            continue
        if pm.has_plugin(name):
            if name in loaded:
                # two distributions' entry points of one name: pluggy skips the second, silently (the
                # plugin is not there, and what it registers is "unknown" with nothing to say why)
                raise PluginError(_taken_name(pm, name, value, dist))
            continue  # a plugin the caller registered under that name before: it stands, as in pluggy
        try:
            # what a third party's module writes to standard output as it is imported (a print at its top, an
            # os.write(1, …)) goes to standard error: the plugins load before every command, and such a line
            # came ahead of `serq run --json`'s report and `serq ir`'s IR (serQ's own parts write nothing)
            with _quiet(value):
                plugin = load_object(value)
            other = pm.get_name(plugin)
            if other is not None:
                # two entry points naming one module (or object): pluggy's ValueError printed the manager's
                # every plugin, modules and paths, and named a line of pluggy's
                by = plugin_distribution(pm, plugin)
                that = (f" of {by.project_name} {by.version}" if getattr(by, "project_name", None)
                        and getattr(by, "version", None) else "")
                raise PluginError(_failed_plugin(
                    name, dist, f"cannot be loaded ({value})", None,
                    reason=f"what it names is the plugin {other!r}{that} already, and one module (or object) is "
                           "one plugin: give it one entry point"))
            with _quiet(value):  # (its serq_addhooks runs here)
                pm.register(plugin, name=name)
        except PluginError:
            raise
        except BadEntryPoint as e:
            raise PluginError(_failed_plugin(name, dist, f"cannot be loaded ({value})",
                                             None, reason=f"its entry point's value {e}")) from None
        except KeyboardInterrupt as e:  # (Ctrl-C, SIGTERM: the command's stop, wherever it landed)
            # the plugin being loaded is noted for plugin_at, which names it: an import that takes long (a
            # module that loads a large library, or waits) and is stopped was "interrupted", naming nothing.
            # A third party's only: serQ's own parts, loaded at every start, are no plugin a user could blame
            # (a signal landing in their import, or in serQ's own handler, named "plugin 'host' (from serq
            # 0.1.0) as it was loaded (serq.builtin): _on_signal at …/serq/signals.py")
            if _entry_package(value) not in FIRST_PARTY_PACKAGES:
                e.serq_loading = (name, dist, value)
            raise
        except BaseException as e:  # noqa: BLE001 - whatever a plugin's import raises is its failure to load
            # (a sys.exit() of its module, or of its serq_addhooks, ended every command with its status and no
            # word, 0 as if the command had done its work; a BaseException of its own was a traceback)
            raise PluginError(_failed_plugin(name, dist, f"cannot be loaded ({value})", e)) from None
        if isinstance(pm, PluginManager):
            pm._scanned_distinfo.append((plugin, dist))
        loaded.add(name)
        count += 1
    return count


def _quiet(value: str) -> Any:
    """Standard output sent to standard error (serq.loading.stdout_to_stderr) while the plugin of entry point
    ``value`` is imported and registered, for a third party's; nothing for serQ's own parts (their start-up
    imports no more)."""
    if _entry_package(value) in FIRST_PARTY_PACKAGES:
        return contextlib.nullcontext()
    from .loading import stdout_to_stderr

    return stdout_to_stderr()


def _taken_name(pm: pluggy.PluginManager, name: str, value: str, dist: Any) -> str:
    """The message of an entry point whose name another distribution's entry point has (serQ's own part's,
    or an earlier distribution's): both named; disabling the name would take both away, so the way out is
    to uninstall one."""
    project = getattr(dist, "project_name", None) if dist is not None else None
    version = getattr(dist, "version", None) if dist is not None else None
    this = f"{project} {version}" if project and version else project or "an unknown distribution"
    other = plugin_distribution(pm, pm.get_plugin(name))
    oname = getattr(other, "project_name", None) if other is not None else None
    that = f"{oname} {getattr(other, 'version', None) or ''}".strip() if oname else "a plugin registered before"
    first = (f"error: plugin {name!r} (from {this}) cannot be loaded ({value}): its name is taken by the plugin "
             f"{name!r} of {that}; entry points of the group 'serq' need names of their own")
    hint = f"(run without it: uninstall {project or 'it'}, or ask its authors to rename its entry point)"
    return f"{printable(first)}\n{printable(hint)}"


def _metadata_entry_points(group: str) -> list[tuple[str, str, Any]]:
    """What :func:`entry_points` finds, through ``importlib.metadata`` (a path the scanner does not read)."""
    import importlib.metadata

    try:
        eps = importlib.metadata.entry_points(group=group)
    except Exception as e:  # noqa: BLE001 - a distribution's entry_points.txt importlib.metadata cannot read
        raise PluginError(printable(f"error: the installed distributions' entry points cannot be read: "
                                    f"{type(e).__name__}: {e}") + "\n(a distribution's entry_points.txt is "
                          "not `name = value` lines: reinstall or uninstall it)") from None
    return [(ep.name, ep.value, _MetadataDist(ep.dist)) for ep in eps]


class _MetadataDist:
    """An ``importlib.metadata`` distribution with ``project_name``, as pluggy's ``DistFacade``."""

    def __init__(self, dist: Any):
        self._dist = dist

    @property
    def project_name(self) -> str | None:
        return self._dist.metadata["Name"] if self._dist is not None else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dist, name)


def get_plugin_manager(*, autoload: bool | None = None, plugins: Iterable[Any] = (),
                       disabled: Iterable[str] | None = None) -> pluggy.PluginManager:
    """A new plugin manager with the installed parts loaded.

    :param autoload: load the ``serq`` entry points; default: unless ``SERQ_DISABLE_PLUGIN_AUTOLOAD`` is
        on (set to a value other than blank, ``0``, ``off``, ``no``, ``false``: :mod:`serq.switches`).
    :param disabled: the entry-point names to block; default: those of ``SERQ_DISABLED_PLUGINS``.
    :param plugins: extra plugin objects (modules or instances) to register, as tests do; one the manager
        has already (an installed plugin's module, loaded by its entry point) is there once, and one whose name
        (a module's ``__name__``) another plugin has is a :class:`PluginError` naming both.
    """
    pm = PluginManager("serq")
    pm.add_hookspecs(hookspecs)
    pm.hook.serq_addhooks.call_historic(kwargs={"pluginmanager": pm})
    if disabled is None:
        disabled = os.environ.get("SERQ_DISABLED_PLUGINS", "").split(",")
    disabled = [name.strip() for name in disabled if name.strip()]
    for name in disabled:
        pm.set_blocked(name)
    if autoload is None:
        autoload = not switch("SERQ_DISABLE_PLUGIN_AUTOLOAD", False)
    if autoload:
        load_entry_points(pm, ENTRY_POINT_GROUP)
        # "host" is the host's own plugin's name whatever is installed
        pm.unknown_disabled = sorted({n for n in disabled if n not in pm.entry_names and n != "host"})
    else:
        # The host's own plugin is always there; the parts come only through their entry points.
        from . import builtin

        if not pm.is_blocked("host"):
            pm.register(builtin, name="host")
    for p in plugins:
        if pm.is_registered(p):
            continue  # loaded already, by its entry point (or given twice): the manager has it once
        canonical = pm.get_canonical_name(p)
        taken = pm.get_plugin(canonical)
        if taken is not None:
            other = plugin_distribution(pm, taken)
            oname = getattr(other, "project_name", None) if other is not None else None
            that = f"{oname} {getattr(other, 'version', None) or ''}".strip() if oname else "a plugin given before"
            raise PluginError(printable(
                f"error: plugin {_object_name(p)!r} cannot be registered: its name {canonical!r} is taken by the "
                f"plugin {canonical!r} of {that}; a plugin object given in plugins= needs a name of its own "
                f"(its module's __name__)"))
        try:
            pm.register(p)
        except (PluginError, KeyboardInterrupt):
            raise
        except BaseException as e:  # noqa: BLE001 - its serq_addhooks raised (or exited), or pluggy refused it
            name = _object_name(p)
            valid = isinstance(e, pluggy.PluginValidationError)
            raise PluginError(_failed_plugin(name, None, "cannot be registered", e, where=not valid,
                                             reason=_without_ids(str(e), p, name) if valid else None,
                                             given=not isinstance(p, types.ModuleType))) from e
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as e:
        # an object registered in-process is named by its class, not by the id() pluggy names it by
        name = plugin_name(pm, e.plugin) if pm.is_registered(e.plugin) else _object_name(e.plugin)
        dist = next((d for p, d in pm.list_plugin_distinfo() if p is e.plugin), None)
        unknown = _unknown_hook(pm, e.plugin)
        reason, at = unknown if unknown is not None else (_without_ids(str(e), e.plugin, name), None)
        raise PluginError(_failed_plugin(name, dist, "is not valid", e, where=False, at=at, reason=reason,
                                         given=pm.is_registered(e.plugin) and _given(pm, e.plugin))) from None
    for plugin, hook in pm.unmarked:
        caller = getattr(pm.hook, hook, None)
        if caller is not None and caller.has_spec() and pm.is_registered(plugin):
            raise PluginError(plugin_message(
                pm, plugin, f"defines {hook} without the @serq.hookimpl marker",
                reason="serQ never calls it, so nothing it registers is there (write @hookimpl above it: from "
                       "serq import hookimpl)"))
    return pm


def _object_name(plugin: Any) -> str:
    """An object's name as a plugin, before (or without) its registration: a module's name, else its
    class's, ``module.Class``."""
    import types

    if isinstance(plugin, types.ModuleType):
        return plugin.__name__
    cls = plugin if isinstance(plugin, type) else type(plugin)  # (a class given as the plugin: itself)
    return f"{cls.__module__}.{cls.__qualname__}"


def _without_ids(text: str, plugin: Any, name: str) -> str:
    """pluggy's message of ``plugin`` with the id() it names an object by, and the object's repr (a memory
    address), replaced by ``name``: a message is the same from run to run."""
    try:
        shown = repr(plugin)
    except Exception:  # noqa: BLE001 - a repr that raises is not in the message either
        shown = None
    if shown:
        text = text.replace(shown, name)
    return text.replace(str(id(plugin)), name)


def _origin(dist: Any) -> str:
    """`` (from DIST VERSION)`` of a plugin's distribution in a message (nothing without one)."""
    project = getattr(dist, "project_name", None) if dist is not None else None
    version = getattr(dist, "version", None) if dist is not None else None
    return f" (from {project} {version})" if project and version else f" (from {project})" if project else ""


#: the most characters of a plugin's failure that its message shows (serq.errors.clipped)
REASON_WIDTH = 2000


#: how to run without a plugin object this process registered (``get_plugin_manager(plugins=[obj])``,
#: ``pm.register(obj)``), which has no entry point for SERQ_DISABLED_PLUGINS to block, nor a distribution
GIVEN_HINT = "leave it out of get_plugin_manager(plugins=[…]) or pm.register(…), where this process registers it"


def _given(pm: pluggy.PluginManager, plugin: Any) -> bool:
    """Whether ``plugin`` is an object (not a module) this process registered itself under pluggy's name for it
    (its ``id()``, or a class's bare ``__name__``), no entry point's: SERQ_DISABLED_PLUGINS does not block it
    under the name messages give it (:func:`plugin_name`, ``module.Class``), nor is there a distribution to
    uninstall. A module registered in-process is named, and blocked, by its ``__name__``."""
    if isinstance(plugin, types.ModuleType) or plugin_distribution(pm, plugin) is not None:
        return False
    name = pm.get_name(plugin)
    return name not in getattr(pm, "entry_names", ()) and (not name or name == str(id(plugin)) or (
        isinstance(plugin, type) and name == plugin.__name__))


def _failed_plugin(name: str, dist: Any, what: str, exc: BaseException | None, where: bool = True,
                   at: tuple[str, int] | None = None, reason: str | None = None, given: bool = False) -> str:
    """The one message of a plugin that failed (to load, in a hook, in what it registered): which plugin
    (its entry point's name and its distribution), what went wrong (the exception, and, with ``where``,
    the line of code that raised it: the innermost of its traceback that is not serQ's own
    (:func:`raising_line`), or ``at``, ``(file, line)``; or
    ``reason`` instead of an exception), and how to run without it (``given``: an object this process
    registered, :func:`_given`, which SERQ_DISABLED_PLUGINS does not block: :data:`GIVEN_HINT`; it was told to
    set SERQ_DISABLED_PLUGINS=module.Class, which changed nothing, "or uninstall it")."""
    origin = _origin(dist)
    project = getattr(dist, "project_name", None) if dist is not None else None
    if reason is None:
        reason = f"{type(exc).__name__}: {exc}" if where else str(exc)
    # one line, and of a bounded length: a plugin's exception of 100 000 characters was a line of as many
    # above the hint (its first and last characters say what it is)
    reason = printable(clipped(" ".join(reason.split()), REASON_WIDTH))
    if at is None and where and exc is not None:
        at = raising_line(exc)
    here = f" at {printable(at[0])}:{at[1]}" if at is not None and at[0][:1] != "<" else ""
    if given:
        return f"error: plugin {printable(name)!r}{origin} {what}: {reason}{here}\n(run without it: {GIVEN_HINT})"
    return (f"error: plugin {printable(name)!r}{origin} {what}: {reason}{here}\n"
            f"(run without it: SERQ_DISABLED_PLUGINS={printable(name)}, or uninstall {project or 'it'})")


#: the top-level packages of serQ's own distributions: code of theirs that raises is serQ's (a bug keeps its
#: traceback), never a plugin's
FIRST_PARTY_PACKAGES = frozenset(("serq", "serq_ir", "serq_frontend", "serq_sim", "serq_report", "serq_vllm",
                                  "serq_sweep"))


def raising_line(exc: BaseException) -> tuple[str, int] | None:
    """``(file, line)`` of the innermost frame of ``exc``'s traceback that is neither serQ's own code nor
    the import machinery's (``<frozen importlib._bootstrap>``, and ``importlib.import_module``, through which
    serQ imports an entry point's module: a module that is not there was put at
    ``…/importlib/__init__.py:126``): the line of a plugin's module that raised, or that asked serQ for what
    could not be had (an entry point's attribute the module lacks is serQ's ``getattr``, its missing module
    serQ's import: no line of the plugin's then). ``None`` when there is none. pluggy's refusal of a hook
    implementation (a parameter its spec does not have, a wrapper that is no generator) is raised in
    pluggy's own code, whose line says nothing to the plugin's author: its place is the implementation's
    definition (:func:`_refused_hookimpl_line`)."""
    import traceback

    if isinstance(exc, pluggy.PluginValidationError):
        at = getattr(exc, "serq_at", None) or _refused_hookimpl_line(exc)
        if at is not None:
            return at
    found = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        mod = frame.f_globals.get("__name__")
        file = frame.f_code.co_filename
        if file[:1] == "<" or (isinstance(mod, str) and mod.partition(".")[0] in _NOT_THE_PLUGINS):
            continue
        found = (file, lineno)
    return found


#: the top-level packages whose frames are never a plugin's line (:func:`raising_line`)
_NOT_THE_PLUGINS = FIRST_PARTY_PACKAGES | {"importlib"}


def _unknown_hook(pm: pluggy.PluginManager, plugin: Any) -> tuple[str, tuple[str, int] | None] | None:
    """What ``check_pending()`` refused of ``plugin``, an implementation of a hook no part specifies, said
    to its author: the hook, the one of that name's spelling a part does specify (a misspelling,
    ``serq_sim_register_stage_kind``), what marks a hook of a part that may be absent or of a later serQ,
    and ``(file, line)`` of its definition; ``None`` when no such implementation is found. pluggy's own
    words, ``unknown hook 'H' in plugin NAME``, named neither the line nor what to do about it."""
    import inspect

    specified = [n for n, c in vars(pm.hook).items() if isinstance(c, pluggy.HookCaller) and c.has_spec()]
    for hook, caller in vars(pm.hook).items():
        if not isinstance(caller, pluggy.HookCaller) or caller.has_spec():
            continue
        for impl in caller.get_hookimpls():
            if impl.plugin is not plugin or impl.opts.get("optionalhook"):
                continue
            try:
                code = inspect.unwrap(impl.function).__code__
                at: tuple[str, int] | None = (code.co_filename, code.co_firstlineno)
            except (AttributeError, ValueError):
                at = None
            import difflib

            from . import __version__

            # hooks' names share long prefixes (serq_sim_register_): the general rule's cutoff (0.6) took
            # serq_sim_register_arrival_laws for serq_sim_register_share_policies; a misspelling is closer
            close = difflib.get_close_matches(hook, specified, n=1, cutoff=0.9)
            meant = f" (did you mean {close[0]}?)" if close else ""
            return (f"it implements the hook {hook}, which no installed part of serQ {__version__} specifies"
                    f"{meant}; a hook of a part that may not be installed, or of a later "
                    "serQ, is marked @hookimpl(optionalhook=True), and is then not called where no part "
                    "specifies it", at)
    return None


def _refused_hookimpl_line(exc: BaseException) -> tuple[str, int] | None:
    """``(file, line)`` of the hook implementation pluggy refused in ``exc``: the ``hookimpl`` its
    validation (``PluginManager._verify_hook``) was looking at, found on the traceback; ``None`` when
    there is none."""
    import inspect
    import traceback

    for frame, _ in traceback.walk_tb(exc.__traceback__):
        impl = frame.f_locals.get("hookimpl")
        func = getattr(impl, "function", None)
        if func is None:
            continue
        try:
            code = inspect.unwrap(func).__code__
        except (AttributeError, ValueError):
            continue
        return code.co_filename, code.co_firstlineno
    return None


def _plugin_module(plugin: Any) -> str | None:
    """The module a plugin object is (a module) or was defined in (an instance: its class's)."""
    import types

    name = plugin.__name__ if isinstance(plugin, types.ModuleType) else getattr(type(plugin), "__module__", None)
    return name if isinstance(name, str) else None


def plugin_name(pm: pluggy.PluginManager, plugin: Any) -> str:
    """A plugin's name in messages: the name it is registered under (an entry point's), or for an object
    registered without one (pluggy names it by its ``id()``, which differs from run to run) its class."""
    name = pm.get_name(plugin)
    if not name or name == str(id(plugin)):
        cls = type(plugin)
        return f"{cls.__module__}.{cls.__qualname__}"
    if isinstance(plugin, type) and name == plugin.__name__:
        # a class given as the plugin (its hooks @staticmethods), which pluggy names by its bare __name__:
        # named as its registration's refusal names it, module.Class (it was 'Other' in one message and
        # 'tests.Other' in the other)
        return _object_name(plugin)
    return name


def plugin_distribution(pm: pluggy.PluginManager, plugin: Any) -> Any:
    """The distribution a plugin was loaded from (``None``: registered in-process)."""
    return next((d for p, d in pm.list_plugin_distinfo() if p is plugin), None)


def plugin_message(pm: pluggy.PluginManager, plugin: Any, what: str, exc: BaseException | None = None,
                   at: tuple[str, int] | None = None, reason: str | None = None) -> str:
    """The one message of ``plugin`` (of ``pm``) that ``what`` (``failed in FUNCTION``, ``registers a
    stage kind wrongly in HOOK``): :func:`_failed_plugin`'s."""
    return _failed_plugin(plugin_name(pm, plugin), plugin_distribution(pm, plugin), what, exc, at=at,
                          reason=reason, given=_given(pm, plugin))


def _third_party_modules(pm: pluggy.PluginManager) -> tuple[dict[str, Any], dict[str, Any]]:
    """The third-party plugins of ``pm`` by their module's name, and by its top-level package's; and, by
    their exact module's name, the plugins whose registrations' code is in a module of another package
    (:func:`_note_registered`: a command's ``module:attribute``, a stage kind defined in a library of its
    own), whose failure is the plugin's as much as one in its own module."""
    exact: dict[str, Any] = {}
    top: dict[str, Any] = {}
    for plugin in pm.get_plugins():
        mod = _plugin_module(plugin)
        if mod is None or mod.partition(".")[0] in FIRST_PARTY_PACKAGES:
            continue
        exact.setdefault(mod, plugin)
        top.setdefault(mod.partition(".")[0], plugin)
    noted = getattr(pm, "registered_modules", None)
    if isinstance(noted, dict):
        for mod, plugin in noted.items():
            own = _plugin_module(plugin)
            if own is not None and own.partition(".")[0] not in FIRST_PARTY_PACKAGES and pm.is_registered(plugin):
                exact.setdefault(mod, plugin)
    return exact, top


#: top-level packages whose classes a registered object may be an instance of (a ``click.Command``) without
#: their code being the plugin's: serQ's own dependencies and Python's
_LIBRARY_PACKAGES = frozenset(("builtins", "click", "pluggy", "numpy", "msgspec", "lark", "sortedcontainers", "tqdm",
                               "pandas", "pyarrow", "matplotlib", "dask", "distributed"))


def _code_modules(obj: Any, depth: int = 0) -> Iterator[str]:
    """The modules whose code ``obj``, something a plugin registered, runs as its own: a class's or a
    function's module, a callable instance's class's, a :class:`serq.cli.LazyCommand`'s target module, a
    click command's callback's (a group's commands' too) and a sugar layer's builders' and rewrite's."""
    import types

    if depth > 3:
        return
    if type(obj).__name__ == "LazyCommand" and isinstance(getattr(obj, "target", None), str):
        yield obj.target.partition(":")[0].strip()
        return
    if isinstance(obj, types.MethodType):
        obj = obj.__func__
    if isinstance(obj, (type, types.FunctionType)):
        mod = getattr(obj, "__module__", None)
        if isinstance(mod, str):
            yield mod
        return
    mod = getattr(type(obj), "__module__", None)
    if isinstance(mod, str) and callable(obj):
        yield mod
    parts: list[Any] = [getattr(obj, "callback", None), getattr(obj, "rewrite", None), getattr(obj, "func", None)]
    for attr in ("builders", "commands"):
        held = getattr(obj, attr, None)
        if isinstance(held, dict):
            parts.extend(list(held.values())[:1000])
    for part in parts:
        if part is not None:
            yield from _code_modules(part, depth + 1)


def _note_registered(pm: pluggy.PluginManager, plugin: Any, obj: Any) -> None:
    """Note on ``pm`` the modules of third-party code ``plugin`` registered as ``obj`` (:func:`_code_modules`,
    without serQ's, Python's and serQ's dependencies'), for :func:`plugin_failure` to name the plugin when
    that code raises: a lazy command's module or a stage kind's library outside the plugin's own package
    raised with a Python traceback, as no plugin's code."""
    own = _plugin_module(plugin)
    if own is None or own.partition(".")[0] in FIRST_PARTY_PACKAGES:  # (serQ's parts: their code is serQ's)
        return
    noted = getattr(pm, "registered_modules", None)
    if not isinstance(noted, dict):
        try:
            noted = pm.registered_modules = {}
        except AttributeError:  # (a manager that takes no attribute: the plugin's own package is still named)
            return
    for mod in _code_modules(obj):
        top = mod.partition(".")[0]
        if mod and top not in FIRST_PARTY_PACKAGES and top not in _LIBRARY_PACKAGES and \
                top not in sys.stdlib_module_names:
            noted.setdefault(mod, plugin)


def _plugin_frames(exact: dict[str, Any], top: dict[str, Any], exc: BaseException) -> tuple[Any, Any]:
    """The innermost frame of ``exc``'s traceback in a third-party plugin's module (``exact``, ``top``:
    :func:`_third_party_modules`), as ``(plugin, frame, line)``, and the innermost frame of a method a
    plugin's class inherits from serQ's (``self`` is the plugin's object), as ``(plugin, frame, line,
    class)``; each ``None`` when there is none."""
    import traceback

    found = inherited = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        mod = frame.f_globals.get("__name__")
        if not isinstance(mod, str):
            continue
        owner = exact.get(mod) or top.get(mod.partition(".")[0])
        if owner is not None:
            found = (owner, frame, lineno)
            continue
        code = frame.f_code
        if code.co_argcount and code.co_varnames[0] == "self":
            cls = type(frame.f_locals.get("self"))
            owner = exact.get(cls.__module__) or top.get(cls.__module__.partition(".")[0])
            if owner is not None:
                inherited = (owner, frame, lineno, cls)
    return found, inherited


def plugin_failure(pm: pluggy.PluginManager | None, exc: BaseException, during: str | None = None) -> str | None:
    """The one message of an exception raised in a third-party plugin's code, or ``None`` when no code of
    a plugin of ``pm`` is on its traceback (a bug of serQ's: it keeps its traceback).

    The plugin is the one whose module (or a module of its top-level package) holds the innermost frame of
    the traceback that is a plugin's: its hook implementation, or a stage kind, policy or format it
    registered, however deep in serQ's code it was called (and whatever serQ code it called in turn). The
    message names the plugin and its distribution, the plugin's function that raised, what serQ was doing
    (``during``: a hook's name, ``the run``), the exception and the plugin's line: ``failed in
    FUNCTION[ during DURING]: TYPE: MESSAGE at FILE:LINE``."""
    if pm is None or exc.__traceback__ is None:
        return None
    exact, top = _third_party_modules(pm)
    if not exact:
        return None
    found, inherited = _plugin_frames(exact, top, exc)
    if found is None and inherited is not None:
        # no line of the plugin's raised, but a method its class inherits did (a stage kind subclassing a
        # built-in one, constructed with a node of another kind): the plugin's object failed, at serQ's line
        owner, frame, lineno, cls = inherited
        code = frame.f_code
        func = f"{cls.__qualname__}.{code.co_name} (inherited from {getattr(code, 'co_qualname', code.co_name)})"
        what = f"failed in {func}" + (f" during {during}" if during else "")
        return plugin_message(pm, owner, what, exc, at=(code.co_filename, lineno))
    if found is None:
        forced = _forced_by_wrapper(exact, top, exc)
        if forced is not None:
            # an old-style hook wrapper's outcome.force_exception(…): the exception was made in the plugin and
            # raised by pluggy, so no frame of the plugin's is on its traceback; the wrapper is named, at its line
            impl, hook = forced
            code = impl.function.__code__
            func = getattr(code, "co_qualname", code.co_name)
            also = during or hook
            what = f"failed in {func}" + (f" during {also}" if also != func else "")
            return plugin_message(pm, impl.plugin, what, reason=(
                f"{type(exc).__name__}: {exc} (the outcome its hook wrapper forced)"), at=(code.co_filename,
                                                                                         code.co_firstlineno))
        return _named_failure(pm, exc, exact, during)
    owner, frame, lineno = found
    code = frame.f_code
    func = getattr(code, "co_qualname", code.co_name)
    what = f"failed in {func}" + (f" during {during}" if during and during != func else "")
    return plugin_message(pm, owner, what, exc, at=(code.co_filename, lineno))


def _forced_by_wrapper(exact: dict[str, Any], top: dict[str, Any], exc: BaseException) -> tuple[Any, str] | None:
    """``(hook_impl, hook name)`` of the third-party old-style hook wrapper (``hookwrapper=True``) whose
    ``outcome.force_exception(exc)`` raised ``exc``: pluggy raises it in its own frame that ran the wrapper
    (``run_old_style_hookwrapper``), with nothing but pluggy's code below that frame (an exception the
    wrapper only let through was raised below it, by the code it came from); ``None`` otherwise."""
    import traceback

    below = None
    for frame, _lineno in traceback.walk_tb(exc.__traceback__):
        mod = frame.f_globals.get("__name__")
        if not (isinstance(mod, str) and mod.partition(".")[0] == "pluggy"):
            below = None
            continue
        if frame.f_code.co_name == "run_old_style_hookwrapper":
            below = frame
    if below is None:
        return None
    impl, hook = below.f_locals.get("hook_impl"), below.f_locals.get("hook_name")
    plugin = getattr(impl, "plugin", None)
    mod = _plugin_module(plugin) if plugin is not None else None
    if not isinstance(hook, str) or mod is None or (exact.get(mod) or top.get(mod.partition(".")[0])) is None:
        return None
    return impl, hook


def plugin_at(pm: pluggy.PluginManager | None, exc: BaseException) -> str | None:
    """Where a third-party plugin's code was when ``exc`` was raised (Ctrl-C in a hook or a stage kind
    that does not return): ``plugin 'NAME' (from DIST VERSION): FUNCTION at FILE:LINE``, the innermost
    frame of its traceback in a plugin's module; ``None`` when no plugin's code was running."""
    if exc.__traceback__ is None:
        return None
    loading = getattr(exc, "serq_loading", None)
    if isinstance(loading, tuple) and len(loading) == 3:
        return _loading_place(*loading, exc)
    if pm is None:
        return None
    exact, top = _third_party_modules(pm)
    found, _inherited = _plugin_frames(exact, top, exc)
    return None if found is None else _plugin_place(pm, *found)


def _entry_package(value: str) -> str:
    """The top-level package of an entry point's ``value`` (``pkg.mod:attr``: ``pkg``)."""
    return value.partition(":")[0].strip().partition(".")[0]


def _loading_place(name: str, dist: Any, value: str, exc: BaseException) -> str:
    """Where the plugin ``name`` was when ``exc`` stopped its loading (its entry point's ``value`` imported,
    its ``serq_addhooks`` called: :func:`load_entry_points`; no manager holds it yet):
    ``plugin 'NAME' (from DIST VERSION) as it was loaded (VALUE): FUNCTION at FILE:LINE``, the innermost
    frame of the traceback in its entry point's package; without the place when none is (the import
    machinery's own, or serQ's, was running)."""
    import traceback

    package = _entry_package(value)
    place = ""
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        mod = frame.f_globals.get("__name__")
        if isinstance(mod, str) and package and mod.partition(".")[0] == package:
            code = frame.f_code
            place = f": {getattr(code, 'co_qualname', code.co_name)} at {code.co_filename}:{lineno}"
    return printable(f"plugin {name!r}{_origin(dist)} as it was loaded ({value}){place}")


def _plugin_place(pm: pluggy.PluginManager, owner: Any, frame: Any, lineno: int) -> str:
    code = frame.f_code
    func = getattr(code, "co_qualname", code.co_name)
    return printable(f"plugin {plugin_name(pm, owner)!r}{_origin(plugin_distribution(pm, owner))}: {func} at "
                     f"{code.co_filename}:{lineno}")


def plugin_running(pm: pluggy.PluginManager | None, base: Any = None) -> Callable[[Any], str | None]:
    """A function of a frame (a signal handler's): where a third-party plugin's code is running, the
    innermost frame of the stack in a plugin's module, as :func:`plugin_at` says it; ``None`` when none is.
    Only the frames above ``base`` count (the frame of the run that asks: a plugin's code that called
    that run, a simulation of its own, is not running in it). The plugins' modules are looked up once,
    here, not at each call."""
    if pm is None:
        return lambda frame: None
    exact, top = _third_party_modules(pm)

    def running(frame: Any) -> str | None:
        while frame is not None and frame is not base:
            mod = frame.f_globals.get("__name__")
            owner = (exact.get(mod) or top.get(mod.partition(".")[0])) if isinstance(mod, str) else None
            if owner is not None:
                return _plugin_place(pm, owner, frame, frame.f_lineno)
            frame = frame.f_back
        return None

    return running


def exit_as_plugin_error(pm: pluggy.PluginManager | None, exc: BaseException, during: str) -> PluginError | None:
    """The :class:`PluginError` naming the plugin whose code raised ``exc`` in an object it registered that
    serQ called ``during`` something (a loader, a report format, a sugar layer's builders and rewrite): an
    exception, a ``sys.exit()`` or a BaseException of its own; ``None`` when ``exc`` is a serQ user error
    (the user's message as it is), an ``OSError`` (the command's handler tells a file the command line names
    from the plugin's own), Ctrl-C, ``MemoryError``, or not a plugin's (the caller raises it as it is).
    Without this, a plugin's ``sys.exit(0)`` ended the command with status 0, no output and no message, as
    if it were the command's own exit; and the library API (``serq_report.render``, ``serq_frontend.compile``,
    ``serq.loading.load_program``) raised a format's, a sugar layer's or a loader's own ``ValueError`` as it
    was, naming no plugin, where ``serq_sim.run`` raises the :class:`PluginError`."""
    if isinstance(exc, (KeyboardInterrupt, MemoryError, OSError)) or getattr(type(exc), "serq_user_error", False):
        return None
    msg = plugin_failure(pm, exc, during)
    return PluginError(msg) if msg is not None else None


@contextlib.contextmanager
def plugin_exits(pm: pluggy.PluginManager | None, during: str) -> Iterator[None]:
    """Around serQ's call of an object a plugin registered (a loader, a report format, a sugar layer's
    builders and rewrite): an exception, a ``sys.exit()`` or a BaseException of the plugin's is raised as the
    :class:`PluginError` naming it (:func:`exit_as_plugin_error`); anything else as it is."""
    try:
        yield
    except BaseException as e:
        failure = exit_as_plugin_error(pm, e, during)
        if failure is None:
            raise
        raise failure from e


class _ReportOut(io.StringIO):
    """The stream a report format writes into (:func:`report_text`): what was written before the format
    closed it (the stream is serQ's to close, but a format that closes what it was given has written its
    report all the same) stays readable."""

    kept: str | None = None

    def close(self) -> None:
        if not self.closed:
            self.kept = self.getvalue()
        super().close()


class FormatWallStop(BaseException):
    """A third party's report format stopped at ``--max-wall`` (:func:`report_text`'s ``max_wall``): its message
    is what the command says (``stopped after 0.3 s of wall time (--max-wall 0.3) within the code of plugin
    …``), and nothing was written. A BaseException, so that the format's ``except Exception`` does not keep
    it; a user's error, so that :func:`plugin_exits` lets it pass as it is."""

    serq_user_error = True


#: the furthest real-time alarm set at once (seconds): a bound further away is reached by alarms one after
#: another (setitimer refuses a time past the platform's time_t: --max-wall 1e20 raised OverflowError)
ALARM_MOST = 1e6


@contextlib.contextmanager
def plugin_alarm(running: Callable[[Any], str | None], deadline: Callable[[], float | None],
                 stop: Callable[[str], BaseException]) -> Iterator[bool]:
    """Within, in the main thread with no other ``SIGALRM`` handler (of Python's, or one set outside Python,
    which ``signal.getsignal`` gives as None and ``signal.signal`` cannot put back) or alarm set: a timer
    (``SIGALRM``) at ``deadline()`` (a ``time.monotonic()`` instant, read at each alarm; None: the bound is
    over, nothing more is done) raises ``stop(where)`` in a third party's code running then (``running`` of
    the frame: :func:`plugin_running`). Fired in serQ's own code, whose work is bounded otherwise, it looks
    again 10 ms later; and so it does after it raised, until the block is over (a plugin that catches the
    stop and works on is stopped again). The one alarm of ``--max-wall`` over a plugin's code: a run's
    (serq_sim.engine's ``_wall_in_plugins``) and a report format's (:func:`report_text`). Gives whether the
    alarm is set (elsewhere, nothing is done)."""
    import signal
    import time

    if (threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer")
            or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN)
            or signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0)):
        yield False
        return

    def alarm(seconds: float) -> None:  # (at least 1 ms, at most ALARM_MOST)
        signal.setitimer(signal.ITIMER_REAL, min(max(seconds, 0.001), ALARM_MOST))

    #: while the alarm is this block's: a handler that runs once the block's end began does nothing (a signal
    #: that came while the timer was disarmed runs it there, before the old handler is put back, and its alarm
    #: again 10 ms later then found Python's default action: the process ended, "Alarm clock")
    live = [False]

    def fired(signum, frame):
        end = deadline()
        if end is None or not live[0]:
            return
        left = end - time.monotonic()
        if left > 0:  # a bound further than one alarm, or the timer's clock ahead of ours
            alarm(left)
            return
        signal.setitimer(signal.ITIMER_REAL, 0.01)  # again: serQ's own code now, or a plugin that catches it
        where = running(frame)
        if where is not None:
            raise stop(where)

    live[0] = True
    old = signal.signal(signal.SIGALRM, fired)
    try:
        end = deadline()
        alarm(ALARM_MOST if end is None else end - time.monotonic())
        yield True
    finally:
        live[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _format_wall(pm: pluggy.PluginManager | None, max_wall: float | None, name: str) -> Any:
    """While a third party's report format runs, under ``--max-wall`` (``max_wall`` seconds from its start):
    :func:`plugin_alarm`, whose stop is :class:`FormatWallStop` in the format's own code."""
    import time

    if max_wall is None:
        return contextlib.nullcontext()
    try:  # (the numbers' one rule of messages, serq-ir's: serq run's parts have it)
        from serq_ir.rules import show_number
    except ImportError:  # pragma: no cover - the host alone
        show_number = "{:g}".format
    t0 = time.monotonic()

    def stop(where: str) -> FormatWallStop:
        return FormatWallStop(f"stopped after {time.monotonic() - t0:.3g} s of wall time (--max-wall "
                              f"{show_number(max_wall)}) within the code of {where}, writing the report in its "
                              f"format {name}: nothing was written")

    return plugin_alarm(plugin_running(pm, sys._getframe(1)), lambda: t0 + max_wall, stop)


def report_text(pm: pluggy.PluginManager | None, formats: Registry, name: str, report: Any,
                max_wall: float | None = None) -> str:
    """The text the report format ``name`` of ``formats`` (a :class:`Registry` of ``reporter(report, out)``)
    writes for ``report``, to memory (so that a format failing half-way leaves no output half-written), in
    the one way every command and ``serq_report.render`` call a format: a ``sys.exit()`` of its own is its
    failure (:func:`plugin_exits`); what it wrote is the report even when it closed ``out`` (which was a
    ``ValueError`` traceback from serQ's read of it); and text that UTF-8 cannot encode (a lone surrogate,
    which standard output wrote as a raw byte and ``-o FILE`` refused with a ``UnicodeEncodeError``
    traceback) is its failure, named, the output left as it was. What a third party's format prints is
    its text too, and a format that returns a value and writes nothing (its text returned, not written) is
    its failure. With ``max_wall`` (``serq run --max-wall``), a third party's format is stopped once it has run
    that many seconds (:func:`_format_wall`: :class:`FormatWallStop`)."""
    out = _ReportOut(newline="")
    reporter = formats[name]
    mod = getattr(reporter, "__module__", None)
    ours = isinstance(mod, str) and mod.partition(".")[0] in FIRST_PARTY_PACKAGES
    with plugin_exits(pm, f"its report format {name}"):
        if ours:
            returned = reporter(report, out)
        else:
            # a third party's format that print()s its report writes it where serQ writes the report: what
            # it prints is its text, in order with what it writes to ``out`` (printed straight to standard
            # output, it missed -o FILE, and a format failing half-way had printed half of it)
            from .signals import undeferred

            # (its code may never return: Ctrl-C and SIGTERM stop it, where the report's writing defers them)
            with contextlib.redirect_stdout(out), undeferred(), _format_wall(pm, max_wall, name):
                returned = reporter(_own_copy(report), out)
    text = out.kept if out.closed and out.kept is not None else out.getvalue()
    if returned is not None and not text:
        # the report returned instead of written: pluggy-like, the value was dropped, and the report was empty
        raise PluginError(formats.plugin_message(
            name, f"failed in its report format {name}",
            f"reporter(report, out) returned {_shown(returned)} and wrote nothing: a format writes its report "
            "to the stream out it is given"))
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            line = text.count("\n", 0, e.start) + 1
            raise PluginError(formats.plugin_message(
                name, f"failed in its report format {name}",
                f"it wrote {ascii(text[e.start])}, a lone surrogate UTF-8 cannot encode (line {line} of its "
                "text): a report is text")) from None
    return text


def _own_copy(report: Any) -> Any:
    """The report as a third party's format is given it: a copy of its own, whose attributes and figures
    (``report.result``, and its lists and dicts: the figures of each observe, stage and pool are shared, as
    the samples are) it may change without changing the report the command goes on to read.
    A format that set ``report.result = None``, or ``report.record_table = None``, ended ``serq run … --dump D``
    or ``--records F`` in a TypeError traceback of serQ's after its report was written (``report.result is a
    NoneType``, ``'NoneType' object is not callable``), and one that changed ``report.result.partial`` changed
    the command's exit status. (The samples and the records' columns are read-only arrays already.)"""
    import copy

    try:
        own = copy.copy(report)
        result = getattr(report, "result", None)
        if result is not None:
            own.result = mine = copy.copy(result)
            for field in getattr(result, "__struct_fields__", ()):  # (a deep copy took 0.9 s for 40 000 members)
                value = getattr(result, field)
                if isinstance(value, (list, dict)):
                    setattr(mine, field, copy.copy(value))
    except Exception:  # noqa: BLE001 - an object that cannot be copied so is given as it is
        return report
    return own


def _named_failure(pm: pluggy.PluginManager, exc: BaseException, plugins: dict[str, Any],
                   during: str | None) -> str | None:
    """The message of an exception no frame of a plugin's raised, but whose message names a plugin's file
    and line (pluggy's of a hook wrapper that did not yield, or yielded twice: ``wrap_controller at 'HOOK'
    FILE:LINE did not yield``), or ``None``."""
    import re

    text = str(exc)
    for mod, plugin in plugins.items():
        file = getattr(sys.modules.get(mod), "__file__", None)
        if not isinstance(file, str):
            continue
        m = re.search(re.escape(file) + r":(\d+)", text)
        if m is not None:
            what = "failed" + (f" during {during}" if during else "")
            return plugin_message(pm, plugin, what, exc, at=(file, int(m.group(1))))
    return None


#: the managers :func:`installed_plugin_manager` built, by the environment and the ``sys.path`` they were built
#: under, the latest last
_installed: dict[tuple[str, str, tuple[str, ...]], pluggy.PluginManager] = {}
#: how many of them are kept (the oldest goes first): a program that changes ``sys.path`` again and again (a test
#: suite's temporary folders) would keep every manager and the modules it imported
_INSTALLED_KEPT = 8
#: held while :func:`installed_plugin_manager` builds one (re-entrant: a plugin loaded may ask for it)
_installing = threading.RLock()


def registered_in(pm: pluggy.PluginManager, plugin: Any) -> str | None:
    """The current folder when ``plugin`` was registered on ``pm``: what a relative path the plugin gives
    (a library folder, ``Path(__file__).parent`` of a module imported through a relative ``sys.path``
    entry) is relative to, whatever folder the process is in later. ``None`` when ``pm`` does not note it
    (a plain ``pluggy.PluginManager``) or the folder was removed."""
    folders = getattr(pm, "folders", None)
    return folders.get(id(plugin)) if isinstance(folders, dict) else None


def installed_plugin_manager() -> pluggy.PluginManager:
    """The plugin manager of the installed plugins, built on first use: what the library API
    (``serq_frontend.compile``, ``serq_sim.run``, ``serq_report.render``, ``serq_sweep.sweep``) uses when it
    is given no ``pm``. A ``serq`` command never uses it: it builds its own manager and passes it to every
    part through the hooks' arguments (a loader's ``options.pm``, a command's context object).

    The installed plugins are those of the two variables that choose them, ``SERQ_DISABLED_PLUGINS`` and
    ``SERQ_DISABLE_PLUGIN_AUTOLOAD``, and of the folders of ``sys.path``, as they are at the call: one
    manager is kept for each (the last :data:`_INSTALLED_KEPT`), so a program that adds a folder of plugins to
    ``sys.path`` after its first call (``sys.path.insert(0, "plugins")``) gets a manager that has them, where
    the one built at the first call was kept for the process and its stage kinds were "unknown"; and the one
    it had before once they are back, whichever call built a manager first. A distribution installed into a
    folder already on ``sys.path`` while the program runs is not looked for (that would read every folder at
    every call): give ``pm=serq.get_plugin_manager()``."""
    env = os.environ
    key = (env.get("SERQ_DISABLED_PLUGINS", ""), env.get("SERQ_DISABLE_PLUGIN_AUTOLOAD", ""), tuple(sys.path))
    pm = _installed.get(key)
    if pm is None:
        # one built at a time: threads whose first calls overlapped each built and kept its own, so a
        # plugin registered on the manager one of them got was missing from the process's (the last built)
        with _installing:
            pm = _installed.get(key)
            if pm is None:
                pm = get_plugin_manager()
                _installed.pop(key, None)
                _installed[key] = pm
                while len(_installed) > _INSTALLED_KEPT:
                    del _installed[next(iter(_installed))]
    return pm


def plugin_selection(pm: Any) -> tuple[bool, tuple[str, ...]] | None:
    """Which installed plugins ``pm`` holds, as another process builds a manager of them
    (:func:`selected_plugin_manager`; a sweep's worker): whether it loaded the entry points, and the
    entry-point names it does not hold (blocked by ``SERQ_DISABLED_PLUGINS`` or ``set_blocked``, or
    unregistered since). ``None`` for the installed plugins as this process's environment chooses them
    (``pm`` None, the library API's). A worker reading its own environment instead ran the plugins its
    environment chose: a local pool's processes start from a server started with the environment of the
    first sweep of the process, so a plugin a later manager blocked ran in them all the same."""
    if pm is None:
        pm = installed_plugin_manager()
    names = getattr(pm, "entry_names", None)
    if names is None:  # (a plain pluggy manager: what it loaded is not known)
        return None
    held = {n for n, p in pm.list_name_plugin() if p is not None}
    blocked = {n for n, p in pm.list_name_plugin() if p is None}
    return bool(names), tuple(sorted(blocked | (names - held)))


_selected: dict[tuple[bool, tuple[str, ...]], pluggy.PluginManager] = {}


def selected_plugin_manager(selection: tuple[bool, tuple[str, ...]] | None) -> pluggy.PluginManager:
    """The plugin manager of the installed plugins ``selection`` (:func:`plugin_selection`) names, built on
    first use and kept for the process; :func:`installed_plugin_manager` for ``None``."""
    if selection is None:
        return installed_plugin_manager()
    pm = _selected.get(selection)
    if pm is None:
        with _installing:
            pm = _selected.get(selection)
            if pm is None:
                autoload, disabled = selection
                pm = _selected[selection] = get_plugin_manager(autoload=autoload, disabled=disabled)
    return pm


def api_plugin_manager(pm: Any) -> pluggy.PluginManager:
    """The plugin manager a library call uses: ``pm`` when it is one, the installed plugins' when it is
    ``None`` (:func:`installed_plugin_manager`); anything else is a TypeError naming what it is (``pm=3``
    was an AttributeError, ``'int' object has no attribute 'hook'``, from deep in the call)."""
    if pm is None:
        return installed_plugin_manager()
    if not isinstance(pm, pluggy.PluginManager):
        raise TypeError("pm must be a plugin manager (serq.plugins.get_plugin_manager(), or None for the "
                        f"installed plugins), not {type(pm).__name__}")
    return pm


def local_plugins(pm: pluggy.PluginManager) -> list[str]:
    """The names of the plugins ``pm`` holds that no installed distribution provides (registered in this
    process: ``pm.register(obj)``), which another process's plugin manager does not have."""
    installed = {id(p) for p, _dist in pm.list_plugin_distinfo()}
    return [plugin_name(pm, p) for _n, p in pm.list_name_plugin() if p is not None and id(p) not in installed]


def provider_name(pm: pluggy.PluginManager, plugin: Any) -> str:
    """How a plugin is named in messages: its distribution and entry point, or its registered name (for
    an object registered without a name, its class: :func:`plugin_name`)."""
    name = plugin_name(pm, plugin)
    for p, dist in pm.list_plugin_distinfo():
        if p is plugin:
            return f"{name} ({dist.project_name} {dist.version})"
    return name


def _provider_text(provider: str | Callable[[], str]) -> str:
    return provider if isinstance(provider, str) else provider()


class _LazyProvider:
    """``provider_name(pm, plugin)``, computed once when first asked for."""

    __slots__ = ("pm", "plugin", "text")

    def __init__(self, pm: pluggy.PluginManager, plugin: Any):
        self.pm = pm
        self.plugin = plugin
        self.text: str | None = None

    def __call__(self) -> str:
        if self.text is None:
            self.text = provider_name(self.pm, self.plugin)
        return self.text

    def __str__(self) -> str:
        return self()


def _run_without(*providers: Any) -> str:
    """How to run without the plugins of ``providers`` that registered one name, the line that follows the
    message as it follows a plugin's own (:func:`_failed_plugin`): each third-party plugin among them by its
    name (SERQ_DISABLED_PLUGINS takes it) and distribution; serQ's own parts, and a provider that is a name
    alone (registered outside a hook), are none to run without. Nothing when none is."""
    found = []
    for p in providers:
        if not isinstance(p, _LazyProvider):
            continue
        mod = _plugin_module(p.plugin)
        if mod is not None and mod.partition(".")[0] in FIRST_PARTY_PACKAGES:
            continue
        dist = plugin_distribution(p.pm, p.plugin)
        found.append((printable(plugin_name(p.pm, p.plugin)), getattr(dist, "project_name", None),
                      _given(p.pm, p.plugin)))
    if not found:
        return ""
    if len(found) == 1:
        name, project, given = found[0]
        if given:
            return f"\n(run without it: {GIVEN_HINT})"
        return f"\n(run without it: SERQ_DISABLED_PLUGINS={name}, or uninstall {project or 'it'})"
    # (an object this process registered is left out of the manager, not blocked: _given)
    if all(given for *_, given in found):
        return f"\n(run without one of them: leave {' or '.join(n for n, *_ in found)} out of the plugins this " \
               "process registers)"
    ways = " or ".join(f"leave {name} out of the plugins this process registers" if given else
                       f"SERQ_DISABLED_PLUGINS={name}" for name, _project, given in found)
    return f"\n(run without one of them: {ways}, or uninstall one; `serq plugins` lists them)"


class Registry:
    """``name → object`` for one kind of thing plugins register, remembering who registered each.

    A provider is its name (a string) or a function returning it, called when the name is first needed
    (naming a plugin reads its distribution's metadata, which most runs never show)."""

    def __init__(self, kind: str, fold_case: bool = False):
        self.kind = kind
        self._items: dict[str, tuple[Any, str | Callable[[], str]]] = {}
        #: names that differ only in case are refused (:data:`CASE_FOLDED_HOOKS`): name case-folded -> name
        self._folded: dict[str, str] | None = {} if fold_case else None

    def add(self, name: str, obj: Any, provider: str | Callable[[], str]) -> None:
        folded = self._folded
        if folded is not None and name not in self._items:
            other_name = folded.get(name.casefold())
            if other_name is not None:
                self._case_clash(other_name, name, provider)
            folded[name.casefold()] = name
        if name in self._items:
            first = self._items[name][1]
            if (isinstance(first, _LazyProvider) and isinstance(provider, _LazyProvider) and first.pm is provider.pm
                    and first.plugin is provider.plugin):
                # one plugin's two calls: it alone named, with how to run without it (it was 'registered twice:
                # by acme (serq-acme 0.3.0) and by acme (serq-acme 0.3.0)', and no way out)
                raise PluginError(plugin_message(
                    provider.pm, provider.plugin, f"registers the {self.kind} {name!r} twice",
                    reason=f"a name is registered once (its second register({name!r}, …) is refused)"))
            other = _provider_text(first)
            raise PluginError(
                f"error: {self.kind} {name!r} is registered twice: by {other} and by "
                f"{_provider_text(provider)}" + _run_without(first, provider)
            )
        self._items[name] = (obj, provider)

    def _case_clash(self, first_name: str, name: str, provider: str | Callable[[], str]) -> None:
        """Refuse ``name``, which differs from the registered ``first_name`` only in case (a plugin's report format
        ``JSON`` beside the built-in ``json``: ``-o r.json`` took the one, ``--format JSON`` the other)."""
        first = self._items[first_name][1]
        why = (f"names of {self.kind}s that differ only in case are one name to the user (-o r.json and "
               f"--format JSON would pick different ones)")
        if (isinstance(first, _LazyProvider) and isinstance(provider, _LazyProvider) and first.pm is provider.pm
                and first.plugin is provider.plugin):
            raise PluginError(plugin_message(
                provider.pm, provider.plugin, f"registers the {self.kind}s {first_name!r} and {name!r}",
                reason=why))
        raise PluginError(
            f"error: {self.kind} {name!r} differs from {first_name!r} only in case: {first_name!r} is registered by "
            f"{_provider_text(first)} and {name!r} by {_provider_text(provider)}; {why}"
            + _run_without(first, provider))

    def __contains__(self, name: str) -> bool:
        return name in self._items

    def __getitem__(self, name: str) -> Any:
        return self._items[name][0]

    def get(self, name: str, default: Any = None) -> Any:
        item = self._items.get(name)
        return item[0] if item else default

    def provider(self, name: str) -> str:
        obj, provider = self._items[name]
        if not isinstance(provider, str):
            provider = provider()
            self._items[name] = (obj, provider)
        return provider

    def names(self) -> list[str]:
        return list(self._items)

    def plugin_of(self, name: str) -> Any:
        """The plugin object that registered ``name`` (``None`` when it registered outside a hook)."""
        provider = self._items[name][1]
        return provider.plugin if isinstance(provider, _LazyProvider) else None

    def plugin_message(self, name: str, what: str, reason: str) -> str:
        """The one message of the plugin that registered ``name``: it ``what``, ``reason``
        (:func:`plugin_message`'s, naming it by its entry point and distribution)."""
        provider = self._items[name][1]
        if isinstance(provider, _LazyProvider):
            return plugin_message(provider.pm, provider.plugin, what, reason=reason)
        return printable(f"error: {self.kind} {name!r} (registered by {_provider_text(provider)}) {what}: {reason}")

    def items(self) -> list[tuple[str, Any]]:
        return [(k, v[0]) for k, v in self._items.items()]


def _calling_impl(codes: dict[int, list[Any]]) -> Any:
    """The hook implementation (of ``codes``: the id of a code object -> implementations) whose call is on
    the stack above the caller: the one that called ``register``, directly or through its own helpers. By
    the code object's identity: code objects compare equal by their contents, not their file, so two
    plugins' implementations of one text (a copy, the same few lines of boilerplate) were one key, and a
    name both registered was 'registered twice: by acme and by acme'."""
    frame = sys._getframe(2)
    while frame is not None:
        impls = codes.get(id(frame.f_code))
        if impls is not None:
            if len(impls) == 1:
                return impls[0]
            # one function serving several plugins (methods of one class): the one bound to this self
            first = frame.f_code.co_varnames[0] if frame.f_code.co_argcount else None
            me = frame.f_locals.get(first) if first else None
            for impl in impls:
                if getattr(impl.function, "__self__", None) is me:
                    return impl
            return impls[0]
        frame = frame.f_back
    return None


#: the registration hooks of serQ's parts whose objects are called (factories, policies, reporters, loaders),
#: and how: one that cannot be called so is refused when it is registered, not when a run first calls it
#: (a TypeError from deep in serQ, the plugin's code never reached)
CALLABLE_HOOKS = {
    "serq_register_loaders": "loader(path, options)",
    "serq_sim_register_stage_kinds": "factory(sim, node, member, flat)",
    "serq_sim_register_eviction_orders": "factory(sim, pool, node)",
    "serq_sim_register_preemption_policies": "factory(sim, pool, node)",
    "serq_sim_register_share_policies": "policy(flows, caps)",
    "serq_report_register_formats": "reporter(report, out)",
}


def call_problem(obj: Any, call: str, shown: bool = True) -> str | None:
    """Why ``obj`` cannot be called as ``call`` says (``factory(sim, pool, node)``: three positional
    arguments; ``settle()``: none), or ``None``. serQ's own objects are not looked at (``inspect`` is not
    imported for them). The reason starts with the object as a message shows it, or, when not ``shown``,
    with ``is not callable`` or ``cannot be called as …`` (the caller names the object)."""
    who = f"{_shown(obj)} " if shown else ""
    if not callable(obj):
        return f"{who}is not callable"
    mod = getattr(obj, "__module__", None)
    if isinstance(mod, str) and mod.partition(".")[0] in FIRST_PARTY_PACKAGES:
        return None
    import inspect

    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):  # no signature to read (a builtin): it is called as it is
        return None
    inner = call[call.index("(") + 1:call.rindex(")")] if "(" in call else ""
    try:
        sig.bind(*range(inner.count(",") + 1 if inner.strip() else 0))
    except TypeError as e:
        return f"{who}cannot be called as {call}: {e}"
    fn = obj if inspect.isfunction(obj) or inspect.ismethod(obj) else getattr(obj, "__call__", None)  # noqa: B004
    why = unrun_body(fn, call)
    return None if why is None else f"{who}{why}"


def unrun_body(fn: Any, call: str) -> str | None:
    """Why calling ``fn`` as ``call`` runs none of its body, or ``None``: ``is a coroutine function (async def),
    whose call as attach(job) returns a coroutine, which nothing awaits, and runs none of its body`` (an
    async generator function and a generator function likewise). serQ and pluggy call what they are given
    and use what the call returns: an ``async def``'s call returns a coroutine nothing awaits, an async
    generator function's (an ``async def`` that yields) an async generator and a generator function's a
    generator, nothing iterating either, and none runs a line of its body (an async attach left every job
    outside its stage, with Python's warning that the coroutine was never awaited; a registration hook so
    registers nothing). The one rule of a contract's method, a factory, a policy (:func:`call_problem`) and
    a registration hook (:func:`collect`)."""
    import inspect

    fn = inspect.unwrap(fn) if callable(fn) else fn
    if inspect.iscoroutinefunction(fn):
        what, thing = "a coroutine function (async def)", "a coroutine, which nothing awaits"
    elif inspect.isasyncgenfunction(fn):
        what, thing = "an async generator function (an async def that yields)", "an async generator, which nothing iterates"
    elif inspect.isgeneratorfunction(fn):
        what, thing = "a generator function (it yields)", "a generator, which nothing iterates"
    else:
        return None
    return f"is {what}, whose call as {call} returns {thing}, and runs none of its body"


def name_problem(name: Any) -> str | None:
    """Why ``name`` cannot be the name something is registered under (``None``: it can): it is not a
    non-empty string, or it holds a character that is not printable (a line break, a tab, an escape): no
    program or command line writes such a name, and every message and listing that names what is
    registered (``unknown stage kind `@x` (plugins register: …)``, ``serq --help``) would be split across
    lines by it, or drive the terminal."""
    if not isinstance(name, str) or not name:
        return f"the name {_shown(name)} is not a non-empty string"
    if not name.isprintable():
        return f"the name {_shown(name)} holds a character that is not printable (a line break, a control character)"
    return None


def suffix_problem(suffix: str) -> str | None:
    """Why ``suffix`` (a printable name, :func:`name_problem`) cannot be the file suffix a loader is
    registered under (``None``: it can): a suffix is ``.`` followed by one or more characters, none of them a
    path separator (``/`` or ``\\``), as ``.sq`` and ``.ir.json`` are. A loader is chosen by the end of the
    file's name, so ``sq`` took ``prog.jsq`` as well as ``p.sq``; ``.`` alone names no type (only names ending
    in a dot); and a suffix is matched against a file's name, which holds no separator, so ``.d/x`` matched
    no file (``\\`` is refused on every system alike, as the separator of some)."""
    if not suffix.startswith(".") or len(suffix) < 2:
        return f"the suffix {_shown(suffix)} is not '.' followed by one or more characters (as '.sq')"
    if "/" in suffix or "\\" in suffix:
        return f"the suffix {_shown(suffix)} holds a path separator: a suffix ends a file's name"
    return None


#: the registration hooks whose names have a rule of their own besides :func:`name_problem`'s
def program_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be the name of a stage kind, an eviction order, a preemption policy or a share
    policy (``None``: it can): a program names one as ``@NAME`` or ``share NAME;``, and the language's names are
    letters, digits and ``_``, not beginning with a digit (``EXT_NAME`` and ``NAME`` of the kernel grammar).
    ``my-kind``, ``9k`` or ``ümlaut`` were registered and listed, and the program that named one was a syntax
    error naming neither the plugin nor the name (``stage s : @my-kind;``: unexpected `-`)."""
    if name.isascii() and name.isidentifier():  # ([A-Za-z_][A-Za-z_0-9]*, with no pattern compiled at start-up)
        return None
    return (f"the name {_shown(name)} is not one a program can write: a program writes @NAME (a share policy: "
            "share NAME;), NAME letters, digits and _ not beginning with a digit")


NAME_RULES: dict[str, Callable[[str], str | None]] = {
    "serq_register_loaders": suffix_problem,
    "serq_sim_register_stage_kinds": program_name_problem,
    "serq_sim_register_eviction_orders": program_name_problem,
    "serq_sim_register_preemption_policies": program_name_problem,
    "serq_sim_register_share_policies": program_name_problem,
}


#: the register hooks whose names may not differ from one another only in case: a report format's name is
#: also an output's suffix (``-o r.json``), which a user writes in either case
CASE_FOLDED_HOOKS = frozenset({"serq_report_register_formats"})


def collect(pm: pluggy.PluginManager, hook: str, kind: str,
            key: Callable[..., str] | None = None, check: Callable[[Any], str | None] | None = None,
            **kwargs: Any) -> Registry:
    """Call a ``register``-style hook through its hook caller and collect what each implementation
    registers.

    ``register(name, obj)`` by default; with ``key``, ``register(obj)`` and the name is ``key(obj)``.
    The hook is called once, as ``pm.hook.<hook>(register=…, **kwargs)``, so pluggy's wrappers and its
    tracing (``pm.enable_tracing()``, ``pm.add_hookcall_monitoring``) see the call like any other. What
    is registered is kept in registration order (the implementations of the first-registered plugin
    first; pluggy calls them last-registered first), each with the plugin that registered it (the
    implementation on the stack when ``register`` is called), so a duplicate names both plugins.

    What a plugin does wrong here is a :class:`PluginError` naming it (its entry point and distribution):
    ``register`` called with the wrong number of arguments, a name that is not a non-empty string of
    printable characters (:func:`name_problem`) or that breaks its hook's own rule (:data:`NAME_RULES`: a
    loader's suffix), an object ``check(obj)`` says is wrong (the reason, else ``None``; without ``check``, for the hooks of
    :data:`CALLABLE_HOOKS`, one that cannot be called as they call it), or an exception its implementation
    raises (the exception, at its line).
    """
    reg = Registry(kind, fold_case=hook in CASE_FOLDED_HOOKS)
    caller = getattr(pm.hook, hook, None)
    if caller is None:
        return reg
    impls = caller.get_hookimpls()
    rank = {id(impl): i for i, impl in enumerate(impls)}
    codes: dict[int, list[Any]] = {}
    for impl in impls:
        code = getattr(impl.function, "__code__", None)
        if code is not None:
            codes.setdefault(id(code), []).append(impl)
    got: list[tuple[int, int, str, Any, Any]] = []
    spelled = "register(object)" if key is not None else "register(name, object)"

    def wrong(impl: Any, why: str) -> PluginError:
        if impl is None:
            return PluginError(f"error: a {kind} is registered wrongly, outside a hook implementation: {why}")
        article = "an" if kind[:1] in "aeiou" else "a"
        return PluginError(plugin_message(pm, impl.plugin, f"registers {article} {kind} wrongly in {hook}",
                                          reason=why))

    def register(*args: Any) -> None:
        impl = _calling_impl(codes)
        if len(args) != (1 if key is not None else 2):
            from serq_ir.rules import takes

            # (in the words of every arity: "`register` takes two arguments, `register(name, object)`, and got 1")
            raise wrong(impl, takes("register", len(args), spelled[len("register("):-1]))
        if key is not None:
            (obj,) = args
            why = check(obj) if check is not None else None
            if why is not None:
                raise wrong(impl, why)
            try:
                name = key(obj)
            except Exception as e:  # noqa: BLE001 - an object without the name the registry keys it by
                raise wrong(impl, f"{_shown(obj)} has no name ({type(e).__name__}: {e})") from None
            why = name_problem(name)
            if why is not None:
                raise wrong(impl, why)
        else:
            name, obj = args
            why = name_problem(name)
            if why is None and hook in NAME_RULES:
                why = NAME_RULES[hook](name)
            if why is not None:
                raise wrong(impl, why)
            why = check(obj) if check is not None else (
                call_problem(obj, CALLABLE_HOOKS[hook]) if hook in CALLABLE_HOOKS else None)
            if why is not None:
                raise wrong(impl, f"{kind} {_shown(name)}: {why}")
        got.append((rank.get(id(impl), len(impls)), len(got), name, obj, impl))

    try:
        returned = caller(register=register, **kwargs)
    except (PluginError, KeyboardInterrupt):  # (Ctrl-C, SIGTERM: the command's stop, wherever it landed)
        raise
    except BaseException as e:  # a plugin's sys.exit() or its own BaseException is its failure too
        if getattr(type(e), "serq_user_error", False):
            raise
        msg = plugin_failure(pm, e, hook)
        if msg is None:
            raise
        raise PluginError(msg) from e
    if returned:
        # an implementation that returned what it meant to register (a dict of kinds, a list of formats):
        # pluggy keeps the value and nothing reads it, so the registration was dropped without a word
        _close_coroutines(returned)
        raise _returned_failure(pm, impls, kwargs, wrong, spelled, returned)
    got.sort(key=lambda g: (g[0], g[1]))
    providers: dict[int, _LazyProvider | str] = {}
    for _r, _s, name, obj, impl in got:
        provider = providers.get(id(impl))
        if provider is None:
            provider = providers[id(impl)] = (_LazyProvider(pm, impl.plugin) if impl is not None
                                              else "a plugin that registered outside its hook")
        reg.add(name, obj, provider)
        if impl is not None:
            _note_registered(pm, impl.plugin, obj)
    return reg


def _close_coroutines(values: list[Any]) -> None:
    """Close the coroutines a registration hook's implementations returned (an ``async def``, which nothing
    awaits): each was Python's ``RuntimeWarning: coroutine … was never awaited`` on standard error, two lines
    each beside the one message that names the plugin."""
    import inspect

    for v in values:
        if inspect.iscoroutine(v):
            v.close()


def _returned_failure(pm: pluggy.PluginManager, impls: list[Any], kwargs: dict[str, Any],
                      wrong: Callable[[Any, str], PluginError], spelled: str, returned: list[Any]) -> PluginError:
    """The error of the implementation of a registration hook that returned a value: the hook's results
    do not say whose each is, so each implementation is asked again, alone, with a ``register`` that keeps
    nothing, to find the first that returns one (as :func:`serq_frontend.cache`'s library folders are)."""

    def ignore(*args: Any) -> None:
        return None

    given = {**kwargs, "register": ignore}
    for impl in impls:
        if getattr(impl, "wrapper", False) or getattr(impl, "hookwrapper", False):
            continue
        try:
            value = impl.function(*(given[a] for a in impl.argnames))
        except Exception:  # noqa: BLE001 - it did not raise the first time; a second answer is no evidence
            continue
        if value is not None:
            _close_coroutines([value])
            why = unrun_body(impl.function, f"{impl.function.__name__}({', '.join(impl.argnames)})")
            if why is not None:
                return wrong(impl, f"it {why} (it returned {_shown(value)}): nothing it registers is registered; "
                                   f"a registration hook is a plain function that calls {spelled}")
            return wrong(impl, f"it returned {_shown(value)}: a registration hook calls {spelled} for what it "
                               "registers and returns nothing")
    hook = impls[0].function.__name__ if impls else "a registration hook"
    return PluginError(f"error: {hook} returned {_shown(returned)} (a hook wrapper's result): a registration hook "
                       f"calls {spelled} for what it registers and returns nothing")


#: the register hooks of serQ's parts, what ``serq plugins`` calls what each registers, and the form of
#: their ``register`` (``None``: ``register(name, object)``; else the name of ``register(object)``)
#: (the extension points a program names come from :mod:`serq.extensions`, their one list)
REGISTER_HOOKS: dict[str, tuple[str, str, Callable[[Any], str] | None]] = {
    "serq_register_commands": ("commands", "command", lambda c: c.name),
    "serq_register_loaders": ("loaders", "loader for", None),
    "serq_frontend_register_sugar": ("sugar layers", "sugar layer", lambda layer: layer.name),
    **{hook: (_extensions.PLURAL[point], point, None) for point, hook in _extensions.HOOKS.items()},
    "serq_report_register_formats": ("report formats", "report format", None),
}


def registrations(pm: pluggy.PluginManager) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """What each plugin of ``pm`` registers through the register hooks of :data:`REGISTER_HOOKS` whose
    spec is added (a part that is not installed adds none): plugin name -> what (``stage kinds``, …) ->
    the names it registers there, in registration order; and the message of each hook whose collection
    failed (a plugin's registration is wrong: the message names it), the others collected still."""
    names = {id(plugin): name for name, plugin in pm.list_name_plugin() if plugin is not None}
    out: dict[str, dict[str, list[str]]] = {}
    problems: list[str] = []
    for hook, (what, kind, key) in REGISTER_HOOKS.items():
        caller = getattr(pm.hook, hook, None)
        if caller is None or not caller.has_spec():
            continue
        try:
            reg = collect(pm, hook, kind, key=key)
        except PluginError as e:
            problems.append(str(e))
            continue
        for name in reg.names():
            plugin = names.get(id(reg.plugin_of(name)))
            if plugin is not None:
                out.setdefault(plugin, {}).setdefault(what, []).append(name)
    return out, problems


def _shown(obj: Any) -> str:
    """An object a plugin registered, as a message shows it: a function or a class by its qualified name,
    anything else by its repr (at most 80 characters) unless that holds a memory address (``<… at
    0x7f…>``), which would make the message differ from run to run: then by its type."""
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(qualname, str) and (isinstance(obj, type) or callable(obj)) and not isinstance(obj, str):
        mod = getattr(obj, "__module__", None)
        text = f"{mod}.{qualname}" if isinstance(mod, str) else qualname
    else:
        try:
            text = repr(obj)
        except Exception:  # noqa: BLE001 - a repr that raises is the plugin's too
            text = ""
        if not text or " at 0x" in text:
            text = f"an object of type {type(obj).__name__}"
    return printable(text if len(text) <= 80 else text[:77] + "...")
