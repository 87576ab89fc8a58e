"""serq-report as a part of ``serq``: the text and JSON reporters."""

from __future__ import annotations

from serq import hookimpl


@hookimpl
def serq_addhooks(pluginmanager):
    from . import hookspecs

    pluginmanager.add_hookspecs(hookspecs)
