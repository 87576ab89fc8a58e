"""The versions of the parts that decide a run's results, which a run's key holds (:func:`core.run_hash`).

A table resumed after one of them changed runs its runs again instead of mixing the results of two versions:
serq-ir (what the IR means), serq-frontend (what a source compiles to), serq-sim (what a run does with it),
the report's figures (``serq_ir.report.FIGURES_VERSION``: which figures a run has) and the distribution of every plugin that provides a stage kind, an eviction order, a preemption policy or
a share policy the program names. They are read where the key is computed, the sweep's own process."""

from __future__ import annotations

from typing import Any

#: serQ's parts whose version decides a run's results, whatever the program names
PARTS = ("serq-frontend", "serq-ir", "serq-sim")


def deciding(program: Any, pm: Any = None, memo: dict[str, Any] | None = None) -> list[str]:
    """``NAME VERSION`` of each part (:data:`PARTS`; ``NAME absent`` when not installed) and of each
    distribution whose plugin registered a stage kind or policy ``program`` names, sorted, each once. A
    plugin registered in this process, of no distribution, is named by its module and class alone (it has
    no version). A name no plugin registers adds nothing: its run fails saying so. ``memo``: what one sweep
    keeps from point to point (the parts' versions and the registries of ``pm``, looked up once)."""
    from serq import plugins
    from serq.extensions import named, provider_of
    from serq_sim.api import registries

    memo = {} if memo is None else memo
    pm = plugins.api_plugin_manager(pm)
    if memo.get("pm") is not pm:
        found = plugins.find_distributions(PARTS)
        from serq_ir.report import FIGURES_VERSION

        # and the report's figures: a version of it with more figures (report version 4: the request metrics'
        # std and token totals; 5: their attainment) would leave the rows of a table resumed from before
        # without them; a version that changed no figure (7: program.plugins) keeps the keys
        parts = {f"{n} {d.version if d is not None else 'absent'}" for n, d in found.items()}
        parts.add(f"report version {FIGURES_VERSION}")
        memo.update(pm=pm, reg=registries(pm), parts=parts)
    out, reg = set(memo["parts"]), memo["reg"]
    of_point = {"stage kind": reg.stage_kinds, "eviction order": reg.evict, "preemption policy": reg.preempt,
                "share policy": reg.share}
    for _path, _what, point, name, _plugins in named(program):  # (a built-in's IR tag too: its plugin's)
        registry = of_point[point]
        if name not in registry:
            continue
        by = provider_of(pm, registry, name)
        if by is None:  # (registered outside a hook: no plugin to name)
            continue
        out.add(f"{by.distribution} {by.version}" if by.distribution is not None
                else f"{by.plugin} (registered in this process)")
    return sorted(out)
