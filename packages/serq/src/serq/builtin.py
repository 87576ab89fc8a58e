"""The host's own plugin: the commands every installation has (``plugins``, ``check``, ``ir``).

They register through the same hook a third-party plugin uses, by name (:class:`serq.cli.LazyCommand`):
their module, :mod:`serq.commands`, is imported only when one of them runs.
"""

from __future__ import annotations

from . import hookimpl
from .plugins import provider_name


def plugin_info(pm, registers: dict[str, dict[str, list[str]]] | None = None) -> list[dict]:
    """Every registered plugin: name, distribution, version, implemented hooks; with ``registers``
    (:func:`serq.plugins.registrations`), what it registers through them, under ``registers``."""
    dists = {id(p): d for p, d in pm.list_plugin_distinfo()}
    out = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda kv: kv[0]):
        if plugin is None:
            continue
        dist = dists.get(id(plugin))
        hooks = sorted(h.name for h in (pm.get_hookcallers(plugin) or []))
        out.append({
            "name": name,
            "module": getattr(plugin, "__name__", type(plugin).__name__),
            "distribution": dist.project_name if dist else None,
            "version": dist.version if dist else None,
            "hooks": hooks,
        })
        if registers is not None:
            out[-1]["registers"] = registers.get(name, {})
    return out


def summary(program) -> str:
    from serq_ir.analysis import count_blocks

    return (f"OK: {len(program.pools)} pool(s), {len(program.stages)} stage(s), "
            f"{len(program.attributes)} attribute(s), {count_blocks(program)} block(s)")


@hookimpl
def serq_register_commands(register):
    from .cli import LazyCommand

    for name in ("plugins", "check", "ir"):
        register(LazyCommand(name, f"serq.commands:{name}_command"))


__all__ = ["provider_name", "summary"]
