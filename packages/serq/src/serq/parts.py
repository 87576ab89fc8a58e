"""What a command says of a part it needs and does not have: installed but switched off by
``SERQ_DISABLED_PLUGINS``, or not installed.

A part whose plugin ``SERQ_DISABLED_PLUGINS`` names is installed all the same; a command that needs it
(``serq run p.sq`` without serq-frontend's loader, ``serq run`` itself without serq-sim) said "install
serq-frontend", "no such command 'run'": the user was told to install what is there. Every such message
asks :func:`how_to_have` for its last words, so it says which of the two it is, and how to have the part.
Only the error path reads anything here (the entry points again, once)."""

from __future__ import annotations

import os
from typing import Any

__all__ = ["disabled_names", "how_to_have", "disabled_command"]

ENV = "SERQ_DISABLED_PLUGINS"


def _blocked_entry_points(pm: Any) -> list[tuple[str, str, Any]]:
    """``(name, value, distribution)`` of every entry point of serQ's group that ``pm`` blocks (the names
    ``SERQ_DISABLED_PLUGINS`` gives)."""
    if pm is None or not os.environ.get(ENV, "").strip():
        return []
    from .plugins import ENTRY_POINT_GROUP, _metadata_entry_points, _Unusual, entry_points

    try:
        found = entry_points(ENTRY_POINT_GROUP)
    except _Unusual:
        found = _metadata_entry_points(ENTRY_POINT_GROUP)
    return [(n, v, d) for n, v, d in found if pm.is_blocked(n)]


def _project(dist: Any) -> str:
    from .plugins import normalize_name

    try:
        name = getattr(dist, "project_name", None)
    except Exception:  # noqa: BLE001 - unreadable metadata: no name
        name = None
    return normalize_name(name) if isinstance(name, str) else ""


def disabled_names(pm: Any, dist: str) -> list[str]:
    """The names of the plugins of the installed distribution ``dist`` (``serq-frontend``) that
    ``SERQ_DISABLED_PLUGINS`` switches off in ``pm`` (empty: none, or ``dist`` is not installed)."""
    from .plugins import normalize_name

    want = normalize_name(dist)
    return [n for n, _v, d in _blocked_entry_points(pm) if _project(d) == want]


def _enable(names: list[str]) -> str:
    quoted = ", ".join(repr(n) for n in names)
    return f"take {quoted} out of {ENV} to enable it"


def how_to_have(pm: Any, dist: str, install: str | None = None) -> str:
    """How to have the part ``dist`` a command needs: ``serq-frontend is installed but disabled by
    SERQ_DISABLED_PLUGINS (take 'frontend' out of SERQ_DISABLED_PLUGINS to enable it)`` when its plugin is
    switched off, else ``install serq-frontend (pip install INSTALL)`` (``install``: what pip is given,
    ``dist`` by default)."""
    names = disabled_names(pm, dist)
    if names:
        return f"{dist} is installed but disabled by {ENV} ({_enable(names)})"
    return f"install {dist} (pip install {install or dist})"


def disabled_command(pm: Any, name: str) -> str | None:
    """Why there is no command ``name`` when a plugin of serQ's own parts that ``SERQ_DISABLED_PLUGINS``
    switches off registers it: ``the command 'run' is serq-sim's, installed but disabled by …``; ``None``
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
            return (f"the command {name!r} is {project}'s, which is installed but disabled by {ENV} "
                    f"({_enable([entry])})")
    return None
