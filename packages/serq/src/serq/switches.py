"""The environment variables that switch something on or off, read by one rule (:func:`switch`):
``SERQ_COMPILE_CACHE`` (on unless switched off), ``SERQ_DISABLE_PLUGIN_AUTOLOAD`` and ``SERQ_TRACE_ITER``
(off unless switched on). Each had its own reading: ``SERQ_DISABLE_PLUGIN_AUTOLOAD=0`` turned the
plugins' autoload off (any value did), ``SERQ_TRACE_ITER=false`` turned the tracing on, while
``SERQ_COMPILE_CACHE=false`` turned its cache off."""

from __future__ import annotations

import os

__all__ = ["OFF", "ON", "switch"]

#: the values that switch a variable off (compared without case and surrounding blanks), and on
OFF = ("0", "off", "no", "false")
ON = ("1", "on", "yes", "true")


def switch(name: str, default: bool) -> bool:
    """Whether the switch ``name`` is on: ``default`` when the variable is not set or is blank; off for
    ``0``, ``off``, ``no``, ``false``; on for any other value (``1``, ``on``, ``yes``, ``true``: a variable
    set to something is asked for)."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    v = raw.strip().lower()
    if not v:
        return default
    return v not in OFF
