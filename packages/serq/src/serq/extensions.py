"""The extension points a program names: stage kinds, eviction orders, preemption policies and share
policies, each registered through its hook (serq-sim's), and the one rule by which a program's names are
checked against those registries, for a source program (serq-frontend's linker) and an IR file
(serq-ir's loader) alike.

A point's registry is collected from the plugin manager only when a program names something in it that
is not built in, so a program of built-in kinds and policies never imports the simulator to compile.
"""

from __future__ import annotations

from typing import Any, NamedTuple

#: point -> the hook its names are registered through
HOOKS = {
    "stage kind": "serq_sim_register_stage_kinds",
    "eviction order": "serq_sim_register_eviction_orders",
    "preemption policy": "serq_sim_register_preemption_policies",
    "share policy": "serq_sim_register_share_policies",
}

#: the part that specifies the hooks (named when it is missing)
OWNER = "serq-sim"

#: point -> what the language has built in (as a program writes it), for messages
BUILT_IN = {
    "stage kind": "fifo, ps, delay, step",
    "eviction order": "lru, by (…)",
    "preemption policy": "none, lifo, by (…)",
    "share policy": "maxmin, bottleneck",
}

PLURAL = {"stage kind": "stage kinds", "eviction order": "eviction orders",
          "preemption policy": "preemption policies", "share policy": "share policies"}

#: share policies the language itself names (language.txt): a program may say them without serq-sim
BUILTIN_SHARE = ("maxmin", "bottleneck")

#: the names the built-ins register under (the IR's own node tags) -> the language's word for each, as a
#: program writes it (``preempt lifo`` is ``PreemptBy`` in the IR)
IR_WORDS = {"Fifo": "fifo", "Ps": "ps", "Delay": "delay", "Step": "step", "EvictLru": "lru", "EvictBy": "by (…)",
            "PreemptNone": "none", "PreemptBy": "by (…)"}

#: the names the built-ins register under that no program names as a plugin's (the IR's own node tags)
IR_TAGS = frozenset(IR_WORDS)


def source_word(name: str, extension: bool | None = None) -> str:
    """The language's spelling of a stage kind, eviction order or preemption policy registered as ``name``:
    the word of a built-in one (``Delay`` is ``delay``, ``EvictLru`` is ``lru``), ``@NAME`` for a plugin's.
    A message about one a program names says it so, not by the IR's tag (``unknown stage kind 'Delay'``
    named a word no program writes). ``extension``: ``name`` is an ``Extension`` node's (a plugin's, even
    when it is spelt as a tag); None: decided by the name."""
    if not extension and name in IR_WORDS:
        return IR_WORDS[name]
    return f"@{name}"


class Extensions:
    """The registries of one plugin manager, collected on first use per point."""

    def __init__(self, pm: Any):
        self.pm = pm
        self._registries: dict[str, Any] = {}

    def registry(self, point: str) -> Any:
        """The :class:`serq.plugins.Registry` of ``point``, or ``None`` when no installed part specifies its
        hook (serq-sim is not installed, or SERQ_DISABLED_PLUGINS switches it off)."""
        if point not in self._registries:
            from .plugins import collect

            caller = getattr(self.pm.hook, HOOKS[point], None) if self.pm is not None else None
            if caller is None or not caller.has_spec():
                self._registries[point] = None
            else:
                self._registries[point] = collect(self.pm, HOOKS[point], point)
        return self._registries[point]

    def registered(self, point: str) -> list[str]:
        """The names plugins register for ``point`` that a program can name (sorted; not the IR's tags)."""
        reg = self.registry(point)
        return sorted(n for n in (reg.names() if reg is not None else []) if n not in IR_TAGS)

    def problem(self, point: str, name: str, spelled: str) -> str | None:
        """Why a program may not name ``name`` as a ``point`` (``None``: it may), with the program's
        spelling ``spelled`` of it (``@batch``, ``'batch'``)."""
        if point == "share policy" and name in BUILTIN_SHARE:
            return None  # the language's own names (the simulator checks its registry when it builds)
        if name in IR_TAGS:
            return (f"{spelled} is the IR's tag of a built-in {point}, not a plugin's; the built-in "
                    f"{PLURAL[point]} are {BUILT_IN[point]}")
        reg = self.registry(point)
        if reg is None:
            from .parts import how_to_have

            return (f"{spelled} names a plugin's {point}, and no installed part registers {PLURAL[point]}: "
                    f"{OWNER} owns the hook {HOOKS[point]}; {how_to_have(self.pm, OWNER)}")
        if name in reg:
            return None
        names = self.registered(point)
        from .errors import did_you_mean

        at = "@" if spelled.lstrip("`'").startswith("@") else ""  # (offered as the program writes it: `@batch`)
        close = did_you_mean(at + name, [at + n for n in names])
        from .parts import others_switched_off

        off = others_switched_off(self.pm)
        if point == "share policy":
            # told as the other points are, the plugins' names apart from the language's own (it was
            # '(registered: bottleneck, maxmin)', which did not say that a plugin may register one)
            names = [n for n in names if n not in BUILTIN_SHARE]
        known = f"plugins register: {', '.join(names)}" if names else f"no plugin registers {PLURAL[point]}"
        # (how another is added where no name is near it: a near one is the likelier meaning)
        how = "" if close else f"; {how_added(point)}"
        return f"unknown {point} {spelled} ({known}; built in: {BUILT_IN[point]}){close}{off}{how}"


def how_added(point: str) -> str:
    """How a ``point``'s names are added, said after a name no plugin registers: by a plugin's hook, the plugin
    installed with an entry point in the group ``serq`` (docs/hooks.md). The message listed what is registered
    and built in, with no word of how another is added."""
    from .plugins import ENTRY_POINT_GROUP

    return (f"a plugin adds {PLURAL[point]} by the hook {HOOKS[point]}, installed with an entry point in the group "
            f"'{ENTRY_POINT_GROUP}' (docs/hooks.md)")


def named(program: Any) -> list[tuple[str, str, str, str, bool]]:
    """What an IR program names at the extension points, in the program's order (its pools, its stages, its
    share policy): ``(JSON path, what names it, point, registry name, plugin's)`` for every pool's evict and
    preempt, every stage's kind and the share policy; the registry name is an ``Extension``'s name or a
    built-in's IR tag (``Delay``), ``plugin's`` whether the program names it as a plugin's (``@NAME``; a
    share policy not of the language's own). The one walk of them: the IR loader's check
    (:func:`ir_problems`), the report's plugins (:func:`plugins_used`) and a sweep's run keys."""
    from serq_ir import nodes as N

    out = []
    for i, pool in enumerate(program.pools):
        for field, point in (("evict", "eviction order"), ("preempt", "preemption policy")):
            node = getattr(pool, field)
            ext = isinstance(node, N.Extension)
            out.append((f"pools[{i}].{field}.name", f"pool {pool.name}", point,
                        node.name if ext else type(node).__name__, ext))
    for i, stage in enumerate(program.stages):
        ext = isinstance(stage.kind, N.Extension)
        out.append((f"stages[{i}].kind.name", f"stage {stage.name}", "stage kind",
                    stage.kind.name if ext else type(stage.kind).__name__, ext))
    if program.share is not None:
        out.append(("share", "", "share policy", program.share, program.share not in BUILTIN_SHARE))
    return out


def ir_problems(program: Any, pm: Any) -> tuple[str, str] | None:
    """The first extension an IR program names that the plugins of ``pm`` do not register, as
    ``(JSON path, message)``; ``None`` when every one is registered. Looked at: every stage's kind, every
    pool's evict and preempt, and the program's share policy (:func:`named`)."""
    exts = Extensions(pm)
    # (pools first, then stages, then the share policy: the order the first problem is found in)
    for path, what, point, name, ext in named(program):
        if ext or point == "share policy":
            why = exts.problem(point, name, repr(name))
            if why:
                return path, f"{what}: {why}" if what else why
    return None
    return None


class Provider(NamedTuple):
    """Who provides a name of an extension point (:func:`provider_of`)."""

    #: the plugin by its registered name (an entry point's), or its class for one registered in this process
    plugin: str
    #: its distribution's project name and version, None for a plugin registered in this process
    distribution: str | None
    version: str | None


def provider_of(pm: Any, registry: Any, name: str) -> Provider | None:
    """The plugin that registered ``name`` in ``registry`` (a point's registry, its ``plugin_of``) and its
    distribution, or None when no plugin did (a name registered outside a hook, or one ``registry`` lacks):
    the one mapping of a name to its provider, which the report's ``program.plugins`` (:func:`plugins_used`)
    and a sweep's run keys (``serq_sweep.versions.deciding``) both read."""
    from .plugins import plugin_distribution, plugin_name

    plugin = registry.plugin_of(name)
    if plugin is None:
        return None
    dist = plugin_distribution(pm, plugin)
    return Provider(plugin_name(pm, plugin), dist.project_name if dist is not None else None,
                    dist.version if dist is not None else None)


def plugins_used(program: Any, pm: Any) -> list[dict[str, Any]]:
    """The plugins that provide what ``program`` names as a plugin's (``@NAME``, a share policy not of the
    language's own), each ``{point, name, plugin, distribution, version}`` once, sorted by point and name:
    the plugin by its registered name (an entry point's), its distribution and version (``None`` for one
    registered in this process; all three ``None`` for a name registered outside a hook: :func:`provider_of`). A
    name no plugin registers is left out (its run fails saying so)."""
    exts = Extensions(pm)
    out = {}
    for _path, _what, point, name, ext in named(program):
        reg = exts.registry(point) if ext else None
        if reg is None or name not in reg or (point, name) in out:
            continue
        by = provider_of(pm, reg, name)
        out[point, name] = {"point": point, "name": name, "plugin": None if by is None else by.plugin,
                            "distribution": None if by is None else by.distribution,
                            "version": None if by is None else by.version}
    return [out[k] for k in sorted(out)]
