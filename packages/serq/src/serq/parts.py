"""What a command says of a part it needs and does not have: installed but switched off by
``SERQ_DISABLED_PLUGINS``, installed but not loaded because ``SERQ_DISABLE_PLUGIN_AUTOLOAD`` turns the
loading of the installed plugins off, or not installed.

A part whose plugin ``SERQ_DISABLED_PLUGINS`` names is installed all the same; a command that needs it
(``serq run p.sq`` without serq-frontend's loader, ``serq run`` itself without serq-sim) said "install
serq-frontend", "no such command 'run'": the user was told to install what is there. Every such message
asks :func:`how_to_have` for its last words, so it says which of the two it is, and how to have the part.
Only the error path reads anything here (the entry points again, once)."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["disabled_names", "how_to_have", "disabled_command", "OWN_COMMANDS", "missing_command"]

ENV = "SERQ_DISABLED_PLUGINS"
AUTOLOAD = "SERQ_DISABLE_PLUGIN_AUTOLOAD"

#: The top-level commands serQ's own parts register, and the part that registers each: what ``serq NAME``
#: says when that part is not installed (:func:`missing_command`), where it could only say "no such
#: command" (and click guessed a neighbour: ``serq fmt`` "Did you mean 'fit'?" with serq-sim alone).
#: The parts' ``serq_register_commands`` are the truth; a test holds this table to them.
OWN_COMMANDS = {
    "ast": "serq-frontend", "fmt": "serq-frontend",
    "run": "serq-sim", "fit": "serq-sim",
    "sweep": "serq-sweep", "compare": "serq-sweep", "plot": "serq-sweep", "metrics": "serq-sweep",
    "vllm": "serq-vllm",
}


def _autoload_off() -> bool:
    """Whether ``SERQ_DISABLE_PLUGIN_AUTOLOAD`` switches the loading of the installed plugins off (the
    switches' one rule, serq.switches), as it did for the plugin manager a command runs with."""
    from .switches import switch

    return switch(AUTOLOAD, False)


def _blocked_entry_points(pm: Any) -> list[tuple[str, str, Any]]:
    """``(name, value, distribution)`` of every entry point of serQ's group that ``pm`` does not have
    because it is switched off: blocked (the names ``SERQ_DISABLED_PLUGINS`` gives), or, under
    ``SERQ_DISABLE_PLUGIN_AUTOLOAD``, never loaded."""
    autoload_off = _autoload_off()
    if pm is None or not (os.environ.get(ENV, "").strip() or autoload_off):
        return []
    from .plugins import ENTRY_POINT_GROUP, _metadata_entry_points, _Unusual, entry_points

    try:
        found = entry_points(ENTRY_POINT_GROUP)
    except _Unusual:
        found = _metadata_entry_points(ENTRY_POINT_GROUP)
    return [(n, v, d) for n, v, d in found if pm.is_blocked(n) or (autoload_off and not pm.has_plugin(n))]


def _project(dist: Any) -> str:
    from .plugins import normalize_name

    try:
        name = getattr(dist, "project_name", None)
    except Exception:  # noqa: BLE001 - unreadable metadata: no name
        name = None
    return normalize_name(name) if isinstance(name, str) else ""


def disabled_names(pm: Any, dist: str) -> list[str]:
    """The names of the plugins of the installed distribution ``dist`` (``serq-frontend``) that are switched
    off in ``pm``, by ``SERQ_DISABLED_PLUGINS`` or ``SERQ_DISABLE_PLUGIN_AUTOLOAD`` (empty: none, or
    ``dist`` is not installed)."""
    from .plugins import normalize_name

    want = normalize_name(dist)
    return [n for n, _v, d in _blocked_entry_points(pm) if _project(d) == want]


def _switched_off(pm: Any, names: list[str]) -> str:
    """How the plugins ``names`` (switched off in ``pm``) are, and how to enable them: ``disabled by
    SERQ_DISABLED_PLUGINS (take 'frontend' out of SERQ_DISABLED_PLUGINS to enable it)``; under
    ``SERQ_DISABLE_PLUGIN_AUTOLOAD`` not loaded, which taking them out of the list alone would not change."""
    blocked = [n for n in names if pm.is_blocked(n)]
    states, ways = [], []
    if blocked:
        states.append(f"disabled by {ENV}")
        ways.append(f"take {', '.join(repr(n) for n in blocked)} out of {ENV}")
    if _autoload_off():
        states.append(f"not loaded, as {AUTOLOAD} turns the loading of the installed plugins off")
        ways.append(f"unset {AUTOLOAD}" + ("" if blocked else ", or set it to 0,"))
    return f"{' and '.join(states)} ({' and '.join(ways)} to enable it)"


def others_switched_off(pm: Any) -> str:
    """What a name no installed plugin registers (a stage kind, a policy, a report format, a command) may be
    missing for: ``; the installed plugin 'acme' (serq-acme 0.3.0) is disabled by SERQ_DISABLED_PLUGINS (take
    'acme' out of SERQ_DISABLED_PLUGINS to enable it), and may register it`` when third parties' plugins are
    switched off (nothing otherwise). They are not imported to ask what they register, as serQ's own parts
    are (:func:`disabled_command`): a third party's plugin may be off for its import's sake."""
    from .plugins import FIRST_PARTY, normalize_name

    ours = {normalize_name(n) for n in FIRST_PARTY}
    off = [(n, d) for n, _v, d in _blocked_entry_points(pm) if _project(d) not in ours]
    if not off:
        return ""
    shown = []
    for n, d in off:
        try:
            project, version = getattr(d, "project_name", None), getattr(d, "version", None)
        except Exception:  # noqa: BLE001 - unreadable metadata: no name
            project = version = None
        dist = " ".join(x for x in (project, version) if isinstance(x, str) and x)
        shown.append(f"{n!r} ({dist})" if dist else repr(n))
    which = f"plugin {shown[0]} is" if len(shown) == 1 else f"plugins {', '.join(shown)} are"
    return f"; the installed {which} {_switched_off(pm, [n for n, _d in off])}, and may register it"


def how_to_have(pm: Any, dist: str, install: str | None = None) -> str:
    """How to have the part ``dist`` a command needs: ``serq-frontend is installed but disabled by
    SERQ_DISABLED_PLUGINS (take 'frontend' out of SERQ_DISABLED_PLUGINS to enable it)`` when its plugin is
    switched off (or not loaded, under ``SERQ_DISABLE_PLUGIN_AUTOLOAD``: said so, and how to load it), else
    ``install serq-frontend (pip install INSTALL)`` (``install``: what pip is given, ``dist`` by default)."""
    names = disabled_names(pm, dist)
    if names:
        return f"{dist} is installed but {_switched_off(pm, names)}"
    return f"install {dist} (pip install {install or dist})"


def disabled_command(pm: Any, name: str) -> str | None:
    """Why there is no command ``name`` when a plugin of serQ's own parts that ``SERQ_DISABLED_PLUGINS``
    switches off (or that ``SERQ_DISABLE_PLUGIN_AUTOLOAD`` leaves unloaded) registers it: ``the command 'run' is serq-sim's, installed but disabled by …``; ``None``
    otherwise. The switched-off plugin is imported to ask it (its ``serq_register_commands``), never
    registered; only serQ's own parts are asked (a third party's plugin may be off for its import's sake)."""
    from .plugins import FIRST_PARTY, load_object, normalize_name

    ours = {normalize_name(n): n for n in FIRST_PARTY}
    for entry, value, dist in _blocked_entry_points(pm):
        project = ours.get(_project(dist))
        if project is None:
            continue
        try:
            register = getattr(load_object(value), "serq_register_commands", None)
            names: list[str] = []
            if register is not None:
                register(names.append)
        except Exception:  # noqa: BLE001 - a part that cannot say: the command is unknown, as before
            continue
        if name in [getattr(c, "name", None) for c in names]:
            return f"the command {name!r} is {project}'s, which is installed but {_switched_off(pm, [entry])}"
    return None


def missing_command(pm: Any, name: str) -> str | None:
    """``the command 'sweep' is serq-sweep's, which is not installed (pip install serq-sweep, or
    serq[all])`` when ``name`` is a command of one of serQ's own parts (:data:`OWN_COMMANDS`) that is not
    installed; ``None`` otherwise (a part installed but switched off is :func:`disabled_command`'s)."""
    from importlib import metadata

    dist = OWN_COMMANDS.get(name)
    if dist is None or disabled_names(pm, dist):
        return None
    try:
        metadata.distribution(dist)
    except metadata.PackageNotFoundError:
        return f"the command {name!r} is {dist}'s, which is not installed (pip install {dist}, or serq[all])"
    return None  # installed, and its plugin did not register it: the command is unknown, as before
