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

import sys


def _startup_interrupt(signum, frame) -> None:
    # Ctrl-C (SIGINT) in the ``serq`` command's start-up, before :func:`serq.signals.install` takes the
    # signal (the first thing :func:`serq.cli.main` does): the command ends as one stopped later in
    # start-up does, the line ``interrupted`` and status 130, not a KeyboardInterrupt's traceback out of an
    # import. Nothing has been written yet; nothing is left to clean up.
    import os

    os.write(2, b"interrupted\n")
    os._exit(130)


def _worker_interrupt(signum, frame) -> None:
    # Ctrl-C (SIGINT) reaching a worker process the ``serq`` command spawned (multiprocessing's spawn: a Dask
    # worker of ``serq sweep --dask local`` while it starts, a local pool's worker where no fork server can
    # start) before it ignores the signal: the command says ``interrupted`` once and ends its workers. Each
    # worker said it too (the handler above: multiprocessing gives a spawned process its parent's
    # ``sys.argv``, the command's), a line a worker under the command's own; it ends without a word.
    import os

    os._exit(130)


def _spawned() -> bool:
    """This process is one that multiprocessing spawned (``python -c 'from multiprocessing.spawn import
    spawn_main; …' --multiprocessing-fork``), whose ``sys.argv`` is its parent's."""
    return "--multiprocessing-fork" in getattr(sys, "orig_argv", ())


def _own_command() -> bool:
    """This process is the ``serq`` command: its script (``serq``, ``serq.exe``, ``serq-script.py``) or
    ``python -m serq`` (while Python locates the module, ``sys.argv[0]`` is ``-m``)."""
    argv0 = sys.argv[0] if sys.argv else ""
    if argv0 == "-m":
        orig = getattr(sys, "orig_argv", [])
        return any(a == "-mserq" or (a == "-m" and orig[i + 1:i + 2] == ["serq"]) for i, a in enumerate(orig))
    return argv0.replace("\\", "/").rsplit("/", 1)[-1] in ("serq", "serq.exe", "serq-script.py")


# The serq command handles SIGINT from the moment its package starts to import (here, before anything else
# of it is imported): _startup_interrupt until serq.signals.install replaces it. A program that imports
# serq keeps Python's Ctrl-C. (_signal, not signal: the module without its enums costs nothing at start-up.)
if _own_command():
    import _signal

    if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
        _signal.signal(_signal.SIGINT, _worker_interrupt if _spawned() else _startup_interrupt)

from .errors import PluginError, SerqError, UserError  # noqa: E402

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
