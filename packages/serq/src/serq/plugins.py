"""Building the plugin manager, and the registries that collect what plugins register.

Start-up order (as pytest and tox do it): add the host's specs, then block the plugins named in
``SERQ_DISABLED_PLUGINS`` (comma-separated entry-point names), then load the ``serq`` entry points
unless ``SERQ_DISABLE_PLUGIN_AUTOLOAD`` is set, then let each part add its specs
(``serq_addhooks``, historic), then ``check_pending()``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

import pluggy

from . import hookspecs
from .errors import PluginError

ENTRY_POINT_GROUP = "serq"


def get_plugin_manager(*, autoload: bool | None = None, plugins: Iterable[Any] = ()) -> pluggy.PluginManager:
    """A new plugin manager with the installed parts loaded.

    :param autoload: load the ``serq`` entry points; default: unless ``SERQ_DISABLE_PLUGIN_AUTOLOAD`` is
        set to a non-empty value.
    :param plugins: extra plugin objects (modules or instances) to register, as tests do.
    """
    pm = pluggy.PluginManager("serq")
    pm.add_hookspecs(hookspecs)
    pm.hook.serq_addhooks.call_historic(kwargs={"pluginmanager": pm})
    for name in os.environ.get("SERQ_DISABLED_PLUGINS", "").split(","):
        if name.strip():
            pm.set_blocked(name.strip())
    if autoload is None:
        autoload = not os.environ.get("SERQ_DISABLE_PLUGIN_AUTOLOAD")
    if autoload:
        pm.load_setuptools_entrypoints(ENTRY_POINT_GROUP)
    else:
        # The host's own plugin is always there; the parts come only through their entry points.
        from . import builtin

        if not pm.is_blocked("host"):
            pm.register(builtin, name="host")
    for p in plugins:
        pm.register(p)
    pm.check_pending()
    return pm


#: the plugin manager of the ``serq`` command running in this process (set by :func:`serq.cli.main`)
_running: pluggy.PluginManager | None = None


def running_plugin_manager() -> pluggy.PluginManager | None:
    """The plugin manager the running ``serq`` command built, if a command is running (``None`` when
    serQ is used as a library): a part that needs the installed plugins while serving the command uses it
    rather than loading the entry points a second time."""
    return _running


def provider_name(pm: pluggy.PluginManager, plugin: Any) -> str:
    """How a plugin is named in messages: its distribution and entry point, or its registered name."""
    name = pm.get_name(plugin) or repr(plugin)
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


class Registry:
    """``name → object`` for one kind of thing plugins register, remembering who registered each.

    A provider is its name (a string) or a function returning it, called when the name is first needed
    (naming a plugin reads its distribution's metadata, which most runs never show)."""

    def __init__(self, kind: str):
        self.kind = kind
        self._items: dict[str, tuple[Any, str | Callable[[], str]]] = {}

    def add(self, name: str, obj: Any, provider: str | Callable[[], str]) -> None:
        if name in self._items:
            other = _provider_text(self._items[name][1])
            raise PluginError(
                f"error: {self.kind} {name!r} is registered twice: by {other} and by "
                f"{_provider_text(provider)}"
            )
        self._items[name] = (obj, provider)

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

    def items(self) -> list[tuple[str, Any]]:
        return [(k, v[0]) for k, v in self._items.items()]


def collect(pm: pluggy.PluginManager, hook: str, kind: str,
            key: Callable[..., str] | None = None, **kwargs: Any) -> Registry:
    """Call every implementation of a ``register``-style hook and collect what each registers.

    ``register(name, obj)`` by default; with ``key``, ``register(obj)`` and the name is ``key(obj)``.
    Implementations are called in registration order (first-registered first), each with a ``register``
    bound to its provider, so a duplicate names both plugins.
    """
    reg = Registry(kind)
    caller = getattr(pm.hook, hook, None)
    if caller is None:
        return reg
    for impl in caller.get_hookimpls():
        provider = _LazyProvider(pm, impl.plugin)

        def register(*args: Any, _provider: _LazyProvider = provider) -> None:
            if key is not None:
                (obj,) = args
                reg.add(key(obj), obj, _provider)
            else:
                name, obj = args
                reg.add(name, obj, _provider)

        available = {"register": register, **kwargs}
        impl.function(**{a: available[a] for a in impl.argnames if a in available})
    return reg
