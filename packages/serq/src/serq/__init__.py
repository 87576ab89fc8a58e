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

from importlib.metadata import PackageNotFoundError, version

import pluggy

from .errors import PluginError, SerqError, UserError

#: The project name: the hook prefix and the entry-point group.
NAME = "serq"
#: Marker for hook implementations, for plugin authors.
hookimpl = pluggy.HookimplMarker(NAME)

try:
    __version__ = version("serq")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0.0.0"

from .plugins import get_plugin_manager  # noqa: E402

__all__ = ["NAME", "PluginError", "SerqError", "UserError", "__version__", "get_plugin_manager", "hookimpl"]
