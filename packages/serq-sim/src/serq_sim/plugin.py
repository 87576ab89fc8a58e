"""serq-sim as a part of ``serq``: the ``run`` command and the built-in stage kinds and policies."""

from __future__ import annotations

from serq import hookimpl


@hookimpl
def serq_addhooks(pluginmanager):
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)
