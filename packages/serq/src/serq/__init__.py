"""serQ: LLM serving deployments as programs. This distribution is the plugin host and the ``serq``
command; the parts (``serq-ir``, ``serq-frontend``, ``serq-sim``, ``serq-report``, ``serq-vllm``) and
third-party plugins join it through the entry-point group ``serq``::

    [project.entry-points.serq]
    myplugin = "my_package.serq_plugin"

A plugin module implements hooks with :data:`hookimpl`::

    from serq import hookimpl

    @hookimpl
    def serq_register_commands(register):
        register(my_click_command)
"""

from .errors import PluginError, SerqError, UserError

#: The project name: the hook prefix and the entry-point group.
NAME = "serq"


def __getattr__(name: str):  # -> Any (typing is not imported: start-up)
    # ``hookimpl`` (the marker for hook implementations, for plugin authors) and ``get_plugin_manager``
    # are made on first use, so that ``serq`` starts by handling Ctrl-C (serq.signals) before pluggy and
    # the plugin machinery are imported.
    if name == "hookimpl":
        import pluggy

        globals()["hookimpl"] = marker = pluggy.HookimplMarker(NAME)
        return marker
    if name == "get_plugin_manager":
        from .plugins import get_plugin_manager

        globals()["get_plugin_manager"] = get_plugin_manager
        return get_plugin_manager
    # ``__version__`` is read from the distribution's metadata on first use (PEP 562): most commands
    # never show it.
    if name == "__version__":
        from .plugins import find_distribution

        dist = find_distribution("serq")
        version = (dist.version if dist is not None else None) or "0.0.0"  # a source tree without metadata
        globals()["__version__"] = version
        return version
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = ["NAME", "PluginError", "SerqError", "UserError", "__version__", "get_plugin_manager", "hookimpl"]
