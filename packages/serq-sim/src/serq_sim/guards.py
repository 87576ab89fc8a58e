"""What the simulator checks of the stage kinds and policies plugins register (docs/hooks.md, "When a
plugin misbehaves").

The built-in kinds and policies are trusted and run unchecked. A third party's (one whose factory or
policy is not serQ's own code) is held to its contract where the engine takes what it gives, at the
cost of a test per call of the plugin's code, paid only by the runs that use it:

* a factory returns an object of the contract's class (:class:`~serq_sim.stages.StageKind`,
  :class:`~serq_sim.policies.EvictionOrder`, :class:`~serq_sim.policies.PreemptionPolicy`), and a
  preemption policy's ``requeue`` is ``"head"`` or ``"tail"``; a third party's factory returns a new object
  for every stage or pool member of the run (not one it built for another member, or for another run);
* an eviction order's ``key(entry)`` is a tuple of numbers (a bool among them, 0 or 1), and its ``pick(pool)`` (its own or inherited) an
  entry cached in that pool now (``None`` only when the pool caches nothing, in no entry and by its count of
  cached units: an order that took entries out of ``pool.own`` left units no eviction can free): a stale
  entry, evicted before, would be evicted again (the pool's units counted twice, or a loop that evicts
  nothing for ever);
* a preemption policy's ``victim(pool, grower)`` is ``None``, the grower, or one of the candidates
  ``sim.preempt_candidates(pool)``, and its ``requeue`` still ``"head"`` or ``"tail"`` when it preempts;
  its ``self_stop`` is ``True`` or ``False`` when the simulation is built;
* a share policy returns one rate per flow, each a number at least 0 (``inf`` allowed, NaN not): a list, a
  tuple or a one-dimensional numpy array, its numbers taken as Python floats; the rates of the flows at a
  stage add up to no more than its capacity;
* a stage kind's ``busy_level()`` is a number from 0 to 1, and its ``queue()``, ``busy()`` and ``work()``
  numbers at least 0 (a utilisation of 2 or NaN was reported as it was, a string was a TypeError in the
  session's compiled code, which names no plugin);
* ``sim.at(t, callback, arg)`` is not given a time before now (the clock would go back) or NaN, nor a
  callback that cannot be called as ``callback(arg)`` (judged once per function), and
  ``sim.job_done(stage, job)`` is given its session's current run (not a job completed already, or one
  that left the stage), at the stage it arrived at, with a ``job.started`` (when the kind set one) from the
  job's arrival to now;
* a stage kind's ``attach(job)`` sets ``job.stage`` to the stage (unless it completed the job at once);
* a stage kind leaves its job's session as it found it but for attributes set to numbers in place: the
  same ``job.owner``, its ``serial`` and its list ``attrs``, every attribute a number (taken as a float);
  so does an eviction order's ``key(entry)`` with ``entry.owner`` and a ``victim(pool, grower)`` with the
  grower and its victim; ``key(entry)`` leaves the entry's ``size``, ``seq`` and ``owner`` as they were;
* a stage kind's count ``present`` is not below 0 where it is integrated (``acc()``).

What breaks a rule is a :class:`serq.errors.PluginError` naming the plugin (its entry point and
distribution), what it registered, what it did and when; an exception raised in the plugin's own code is
one too (:func:`serq.plugins.plugin_failure`, at :func:`serq_sim.run`).
"""

from __future__ import annotations

import contextlib
import math
import numbers
import weakref
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from serq.errors import PluginError, place
from serq.plugins import FIRST_PARTY_PACKAGES, call_problem
from serq_ir.rules import show_number


def first_party(obj: Any) -> bool:
    """Whether ``obj`` (a factory, a policy, a class) is serQ's own code."""
    return first_party_module(getattr(obj, "__module__", None))


def first_party_module(name: Any) -> bool:
    """Whether the module ``name`` is serQ's own (judged once a name: a family of 10**5 pools asks it of each
    member's policies)."""
    if type(name) is str:
        own = _FIRST_PARTY_MODULES.get(name)
        if own is None:
            own = _FIRST_PARTY_MODULES[name] = name.partition(".")[0] in FIRST_PARTY_PACKAGES
        return own
    return isinstance(name, str) and name.partition(".")[0] in FIRST_PARTY_PACKAGES


#: :func:`first_party_module`'s answers, by module name (a fixed rule of the name: FIRST_PARTY_PACKAGES)
_FIRST_PARTY_MODULES: dict[str, bool] = {}


def _shown(obj: Any) -> str:
    """What a plugin returned, as a message shows it: never a repr with a memory address in it (the
    message would differ from run to run)."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        text = repr(obj)
        return text if len(text) <= 60 else text[:57] + "..."
    if isinstance(obj, (tuple, list)) and len(obj) <= 6:
        inner = ", ".join(_shown(x) for x in obj)
        return f"({inner}{',' if len(obj) == 1 else ''})" if isinstance(obj, tuple) else f"[{inner}]"
    return f"an object of type {type(obj).__name__}"


def failure(registry: Any, name: str, what: str, reason: str, sim: Any = None, session: Any = None,
            at: Any = None) -> PluginError:
    """The error of the plugin that registered ``name`` in ``registry``: it ``what`` (``built stage svc
    wrongly``), ``reason``. The one rule of every contract a plugin breaks: at the simulated time when ``sim``
    is given (in the run); the declaration of the pool or stage it concerns, ``at`` (its member, a pool or a
    stage: :func:`declared`), noted with its place, the source line and a caret, as a run-time error is placed
    (a pool's eviction order's ``key(entry)`` or ``pick(pool)`` and a stage's ``busy_level()`` have no session at
    hand, and named no place); and with the trace row ``session`` replays, when it is the session of the job or
    the growth at hand (serq_sim.errors.replay_text, the note of every run-time error of a trace session)."""
    read = ""
    if sim is not None:
        reader = getattr(getattr(sim, "plugin_jobs", None), "reader", None)
        if reader is not None and session is None:  # (a stage's observable read by a statement: reading)
            session = reader[1]
            read = _read_note(sim, reader[0], session)
        reason = f"{reason} ({_when(sim, session)})"
    note = declared_share(sim) if at is SHARE else declared(at)
    return PluginError(registry.plugin_message(name, what, reason) + note + read + _replayed(sim, session))


#: what a share policy's failure concerns (:func:`failure`'s ``at``): the program's ``share NAME;``
SHARE = object()


def _when(sim: Any, session: Any = None) -> str:
    """``at t=T``, and ``, session N`` when the failure is at a session's job or growth (``session``)."""
    serial = getattr(session, "serial", None)
    return f"at t={show_number(sim.now)}" + (f", session {serial}" if isinstance(serial, int) else "")


def declared_share(sim: Any) -> str:
    """``\nFILE:LINE:COL: note: share NAME is declared here``, the source line and a caret: where the program
    of ``sim`` names its share policy (``Program.share_span``); nothing without one (an IR written without
    spans, or before the span was written)."""
    program = getattr(sim, "program", None)
    span = getattr(program, "share_span", None)
    if span is None:
        return ""
    from serq.errors import located

    return "\n" + located(span, f"share {program.share} is declared here", getattr(sim, "source", None), kind="note")


def _label(node: Any, index: int) -> str:
    """Member ``index`` of the pool or stage ``node`` declares, as the report names it (``report.member_label``:
    ``kv`` declared without a size, ``kv[0]`` of ``pool kv[1]``, a family of one, where a failure said ``kv``)."""
    from .report import member_index

    i = member_index(SimpleNamespace(node=node, index=index))
    return node.name if i is None else f"{node.name}[{i}]"


def declared(member: Any) -> str:
    """``\nFILE:LINE:COL: note: pool p is declared here`` (or ``stage s``, a family's member ``pool kv[1]``),
    the source line and a caret, for a pool or a stage (``member``: a :class:`~serq_sim.pools.model.Pool`, else
    a stage, or what has a stage's ``node``, ``index`` and ``sim``) whose node has a span (the statement that
    declares it); nothing for ``None`` or a node without one (an IR written without spans)."""
    node = getattr(member, "node", None)
    span = getattr(node, "span", None)
    if span is None:
        return ""
    from serq.errors import located

    from .pools.model import Pool

    kind = "pool" if isinstance(member, Pool) else "stage"
    label = _label(node, getattr(member, "index", 0))
    sim = getattr(member, "sim", None)
    return "\n" + located(span, f"{kind} {label} is declared here", getattr(sim, "source", None), kind="note")


def _replayed(sim: Any, session: Any) -> str:
    """The trace row ``session`` replays, as a run-time error notes it (nothing for none)."""
    if sim is None or session is None:
        return ""
    from .errors import replay_text

    return replay_text(sim, getattr(session, "serial", None), getattr(session, "trace", None))


def session_of(e: BaseException, session: Any) -> None:
    """Note on ``e``, an exception a plugin's code raised at a job of ``session`` (its ``attach``, its
    ``sim.job_done`` of one), the session, for :func:`noted_session` once it is the plugin's failure."""
    if session is not None and getattr(e, "serq_session", None) is None:
        try:
            e.serq_session = session  # type: ignore[attr-defined]
        except AttributeError:  # (an exception of __slots__: without the note)
            pass


def noted_session(e: BaseException, sim: Any) -> str:
    """The trace row note of the session :func:`session_of` noted on ``e``, else of the session whose job the
    plugin's innermost function on ``e``'s traceback was given (an argument that is a job: ``attach(job)``,
    an event's ``callback(job)``, which raised), or nothing."""
    return _replayed(sim, _session_at(e))


def _session_at(e: BaseException) -> Any:
    """The session :func:`noted_session` notes: the one :func:`session_of` noted on ``e``, else the owner of a
    job the plugin's innermost function on ``e``'s traceback was given, else None."""
    session = getattr(e, "serq_session", None)
    if session is None:
        from .stages import Job

        tb = e.__traceback__
        while tb is not None:
            frame = tb.tb_frame
            if not first_party_module(frame.f_globals.get("__name__")):
                code = frame.f_code
                for name in code.co_varnames[:code.co_argcount]:
                    v = frame.f_locals.get(name)
                    if isinstance(v, Job) and v.owner is not None:
                        session = v.owner  # (the innermost such frame's, the one that raised last)
                        break
            tb = tb.tb_next
    return session


# ---------------------------------------------------------------------------------------------------
# What factories build
# ---------------------------------------------------------------------------------------------------


def _registered_by_third_party(registry: Any, name: str) -> bool:
    """Whether a third party's plugin registered ``name`` in ``registry`` (not serQ's own parts)."""
    import types

    plugin = registry.plugin_of(name)
    if plugin is None:
        return False
    return not first_party_module(plugin.__name__ if isinstance(plugin, types.ModuleType) else type(plugin).__module__)


def build_with(registry: Any, name: str, what: str, factory: Any, *args: Any, span: Any = None) -> Any:
    """``factory(*args)``, the factory ``registry`` has for ``name``, building ``what`` (``stage svc``, ``the
    eviction order of pool p``) declared at ``span``. A factory of serQ's own that a third party registered
    under its own name (``register("myfifo", FifoStage)``, an alias of a built-in kind) and that fails on the
    plugin's node (an ``Extension``, whose ``params`` are not the built-in node's fields) is the plugin's
    failure, named: no frame of the plugin's is on the traceback, so :func:`serq.plugins.plugin_failure`
    found none to name, and the run ended in serQ's ``AttributeError: 'Extension' object has no attribute
    'servers'``. A third party's refusal of the program's arguments, a ``SimError`` whose message is not
    located (``SimError("stage s: @k takes …")``, as docs/hooks.md has it), is put at ``span``, the
    declaration whose arguments it refuses, as serQ's own messages are: it was ``error: stage s: …`` alone."""
    try:
        return factory(*args)
    except Exception as e:
        if getattr(type(e), "serq_user_error", False):
            if not first_party(factory) and not _located(str(e)):
                from .errors import SimError, format_error

                raise SimError(format_error(span, None, None, str(e), getattr(args[0], "source", None))) from e
            raise
        if not first_party(factory) or not _registered_by_third_party(registry, name):
            raise
        tb = e.__traceback__
        while tb.tb_next is not None:
            tb = tb.tb_next
        qual = getattr(factory, "__qualname__", type(factory).__qualname__)
        raise PluginError(registry.plugin_message(
            name, f"builds {what} wrongly",
            f"it registered serQ's {factory.__module__}.{qual} for {name!r}, which cannot build it: "
            f"{type(e).__name__}: {e} at {tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}")) from e


def placed(e: BaseException, sim: Any, job: Any = None) -> BaseException | None:
    """A :class:`~serq_sim.SimError` a plugin's own code raised in the run (a stage kind refusing a job, its
    policy a state) with a message that says no place (``SimError("stage s: a job of 2 is over its limit")``),
    placed as the run's own errors are: ``FILE:LINE:COL: error: at t=T, session N: …`` at the run statement
    of ``job`` when the plugin was given one (its ``attach``), else ``FILE:LINE:COL: error: at t=T: …`` at the
    declaration of the stage or pool whose kind, order or policy raised it (:func:`_declared_at`; it was
    ``FILE: error: at t=T: …``, no line), ``FILE: error: at t=T: …`` without one; ``None`` for any other
    exception (serQ's own errors, which say where, are left as they are)."""
    from .errors import SimError, session_error

    if not isinstance(e, SimError) or _located(str(e)):
        return None
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is None or first_party_module(tb.tb_frame.f_globals.get("__name__")):
        return None
    owner = getattr(job, "owner", None)
    span = sim.spans[job.span] if owner is not None and 0 <= job.span < len(sim.spans) else None
    if owner is None:
        return session_error(sim, span or _declared_at(e), sim.now, None, None, str(e))
    return session_error(sim, span, sim.now, owner.serial, owner.trace, str(e))


def _declared_at(e: BaseException) -> Any:
    """The span of the declaration of the stage or pool whose stage kind, eviction order or preemption policy
    was running when ``e`` was raised (the innermost such ``self`` on its traceback), or None (a share
    policy's function, a node without a span)."""
    from .policies import EvictionOrder, PreemptionPolicy
    from .stages import StageKind

    span = None
    tb = e.__traceback__
    while tb is not None:
        obj = tb.tb_frame.f_locals.get("self")
        node = (getattr(obj, "node", None) if isinstance(obj, StageKind) else
                getattr(getattr(obj, "pool", None), "node", None) if isinstance(obj, (EvictionOrder, PreemptionPolicy))
                else None)
        span = getattr(node, "span", None) or span
        tb = tb.tb_next
    return span


def _located(message: str) -> bool:
    """Whether a user error's message says where already (``FILE:LINE:COL: error: …``, ``FILE: error: …``, or
    ``error: …`` of serQ's own making)."""
    first = message.partition("\n")[0]
    return first.startswith("error: ") or ": error: " in first


#: what the base classes' ``__init__`` sets that serQ reads of every stage kind, order or policy, and how
#: a subclass's ``__init__`` calls it
_BASE_INIT = {
    "StageKind": (("sim", "node", "present", "t_last", "a_present", "a_busy", "completions", "_marked"),
                  "super().__init__(sim, node, member, flat)"),
    "EvictionOrder": (("sim", "pool", "node", "ranked", "keyed"), "super().__init__(sim, pool, node)"),
    "PreemptionPolicy": (("sim", "pool", "node"), "super().__init__(sim, pool, node)"),
}


def _base_init_problem(obj: Any, base: type) -> str | None:
    """Why ``obj``, of a third party's subclass of ``base``, lacks what ``base.__init__`` sets (its own
    ``__init__`` did not call it) or a method the engine calls in every run of it that ``base`` leaves to it
    (a stage kind's ``attach``, a starting kind's ``try_start``), or ``None``. serQ's code read the attribute
    first (an order's ``pool``, its sorted ``ranked``), an AttributeError with no frame of the plugin's: a
    traceback; a method left out raised the base's bare NotImplementedError mid-run. (One the engine calls
    only when the program needs it, a kind's ``detach`` at a preemption, an order's ``key`` at an eviction,
    a policy's ``victim``, is left to that call: a kind that never needs it runs.)"""
    attrs, call = _BASE_INIT[base.__name__]
    missing = [a for a in attrs if not hasattr(obj, a)]
    if missing:
        return (f"its {type(obj).__name__} has no attribute {missing[0]!r}, which {base.__name__}.__init__ sets: "
                f"its __init__ does not call {call}")
    cls = type(obj)
    needed = _ABSTRACT.get(base.__name__, ()) + (_ABSTRACT["wants_start"] if getattr(obj, "wants_start", False)
                                                 else ())
    for method, shown in needed:
        if getattr(cls, method, None) is getattr(base, method, None):
            return (f"its {cls.__name__} does not implement {shown}, which the engine calls (the base class's "
                    f"{base.__name__}.{method} raises NotImplementedError)")
    return None


#: the methods a base class of the contracts leaves to its subclass (its own raises NotImplementedError) that
#: the engine calls in every run of it
_ABSTRACT = {"StageKind": (("attach", "attach(job)"),), "wants_start": (("try_start", "try_start()"),)}


#: the methods of the contracts the engine calls, as it calls them (the number of arguments after ``self``)
_STAGE_METHODS = (("attach", "attach(job)"), ("detach", "detach(job)"), ("settle", "settle()"),
                  ("busy_level", "busy_level()"), ("bind", "bind()"), ("queue", "queue()"), ("busy", "busy()"),
                  ("work", "work()"), ("dead_event", "dead_event(callback, arg)"))
_START_METHODS = (("idle", "idle()"), ("try_start", "try_start()"))
_EVICTION_METHODS = (("key", "key(entry)"), ("pick", "pick(pool)"), ("on_insert", "on_insert(entry)"),
                     ("on_remove", "on_remove(entry)"), ("on_shrink", "on_shrink(entry)"))
_PREEMPTION_METHODS = (("victim", "victim(pool, grower)"),)

#: class -> why one of its methods cannot be called as the engine calls it (``None``: they all can), judged
#: once per class (a factory is called once per member of a family)
_judged_classes: weakref.WeakKeyDictionary[type, str | None] = weakref.WeakKeyDictionary()


def _methods_problem(obj: Any, methods: tuple[tuple[str, str], ...]) -> str | None:
    """Why a method of a third party's ``obj`` that the engine calls cannot be called as it calls it (a
    parameter missing, or one too many), or ``None``. A method the class inherits from serQ's is not looked
    at. Left unchecked, the engine's own call raised the TypeError mid-run, where no frame of the plugin's
    names it."""
    cls = type(obj)
    try:
        return _judged_classes[cls]
    except KeyError:
        pass
    except TypeError:  # a class that takes no weak reference: judged every time
        return _judge_methods(obj, methods)
    why = _judged_classes[cls] = _judge_methods(obj, methods)
    return why


def _judge_methods(obj: Any, methods: tuple[tuple[str, str], ...]) -> str | None:
    cls = type(obj)
    for method, call in methods:
        if first_party(getattr(cls, method, None)):
            continue
        f = getattr(obj, method, None)
        why = call_problem(f, call, shown=False) if f is not None else None
        if why is not None:
            return f"{cls.__name__}.{method} {why}"
    return None


def check_stage(sim: Any, stage: Any, registry: Any, name: str, node: Any, member: int) -> None:
    """Member ``member`` of stage ``node``, as a third party's factory built it for ``sim``."""
    from .stages import StageKind

    label = _label(node, member)
    at = SimpleNamespace(node=node, index=member, sim=sim)  # (the stage's declaration, for a failure's note)
    if not isinstance(stage, StageKind):
        raise failure(registry, name, f"builds stage {label} wrongly",
                      f"its factory returned {_shown(stage)}, not a serq_sim.stages.StageKind", at=at)
    # one object for two stages: the engine counted both stages' jobs, time averages and completions in it,
    # and reported the sum under the first stage's name twice
    _check_new(sim, stage, "stage", f"stage {label}", registry, name, f"builds stage {label} wrongly",
               "StageKind", "stage of its kind", at)
    if not first_party(type(stage)):
        _noted(sim).parties.append((registry, name, f"stage {label}", stage))
        why = _base_init_problem(stage, StageKind) or _methods_problem(
            stage, _STAGE_METHODS + (_START_METHODS if stage.wants_start else ()))
        if why is not None:
            raise failure(registry, name, f"builds stage {label} wrongly", why, at=at)
        _guard_observables(stage, registry, name, node)


#: a stage kind's signals and observables: (method, least, greatest)
_SIGNALS = (("busy_level", 0.0, 1.0), ("queue", 0.0, float("inf")), ("busy", 0.0, float("inf")),
            ("work", 0.0, float("inf")))


def _guard_observables(stage: Any, registry: Any, name: str, node: Any) -> None:
    """``busy_level()`` (the utilisation signal) and the observables ``queue()``, ``busy()`` and ``work()`` of
    a third party's stage checked at every call: a number in their range, taken as a Python float."""
    label = _label(node, stage.index)

    def checked(method: str, lo: float, hi: float):
        f = getattr(stage, method)

        def call():
            v = f()
            if type(v) is not float and _number(v):
                v = float(v)
            if type(v) is float and lo <= v <= hi:
                return v
            within = (f"from {show_number(lo)} to {show_number(hi)}" if hi != float("inf")
                      else f"at least {show_number(lo)}")
            raise failure(registry, name, f"failed in its stage {label}",
                          f"{method}() returned {_shown(v)}, not a number {within}", stage.sim, at=stage)

        return call

    for method, lo, hi in _SIGNALS:
        try:
            setattr(stage, method, checked(method, lo, hi))
        except AttributeError:  # a read-only one (a property of the kind's) or no instance attribute
            continue  # (__slots__): that one left unchecked, the others and the guards below still set
    # (a kind whose busy_level is a property left every guard out: a count of present below 0 went unsaid)
    if not all([_takes(stage, m) for m in ("acc", "attach", "detach")]):
        return  # a kind whose instances take no attribute (__slots__): left unchecked
    _guard_present(stage, registry, name, label)
    _guard_jobs(stage, registry, name, label)
    _noted(stage.sim).owners[id(stage)] = (registry, name, label)


def _takes(obj: Any, attr: str) -> bool:
    """Whether ``obj`` takes an attribute ``attr`` of its own (set here to what it reads: nothing changes)."""
    try:
        setattr(obj, attr, getattr(obj, attr))
    except AttributeError:
        return False
    return True


def _guard_present(stage: Any, registry: Any, name: str, label: str) -> None:
    """``present``, the count of jobs the stage holds, checked where it is integrated (``acc()``, which the
    contract calls before every change of it, and the engine at a warm-up's and the run's end): a count
    below 0 (a job counted out twice, or out without being counted in) was integrated as it was, a mean
    present of -9.88 reported without a word; so was one that is no whole number (a job counted in as 0.5:
    the report's present and utilisation of the stage halved, and ``queue(s)`` read 0.5 a job)."""
    acc = stage.acc

    def checked_acc():
        n = stage.present
        if not _number(n):  # (text or None was a TypeError of the comparison below: '>=' not supported)
            raise failure(registry, name, f"failed in its stage {label}",
                          f"its count present is {_shown(n)}, not a number (the jobs at it: attach(job) counts a job "
                          "in as 1, self.present += 1, and its completion or detach(job) out as 1)", stage.sim,
                          at=stage)
        if not n >= 0:
            raise failure(registry, name, f"failed in its stage {label}",
                          f"its count present is {_shown(n)}, not a number at least 0 (a job counted out of it "
                          "twice, or never counted in)", stage.sim, at=stage)
        if n % 1 != 0:  # (inf % 1 is NaN: no count either)
            raise failure(registry, name, f"failed in its stage {label}",
                          f"its count present is {_shown(n)}, not a whole number of jobs (attach(job) counts a "
                          "job in as 1, self.present += 1, and its completion or detach(job) out as 1)",
                          stage.sim, at=stage)
        return acc()

    stage.acc = checked_acc


def _guard_jobs(stage: Any, registry: Any, name: str, label: str) -> None:
    """The jobs a third party's stage holds, noted as they arrive (``attach``) and leave (``detach``), so
    that ``sim.job_done`` knows the stage a job is at (:func:`guard_engine`); and ``attach(job)`` held to
    setting ``job.stage = self`` (unless it completed the job at once): the engine detaches a preempted or
    ended session's job through ``job.stage``, so a job left without it stayed in the stage's queue and its
    count ``present`` for the rest of the run, or was completed after its session had moved on."""
    attach = stage.attach
    detach = stage.detach
    noted = _noted(stage.sim)
    noted.stages.add(stage)
    held = noted.jobs

    counts = noted.counts
    me = id(stage)
    counts[me] = 0

    def noted_attach(job):
        key = id(job)
        if key not in held:
            counts[me] += 1
        owner = job.owner
        held[key] = (job, stage, owner) if owner is None else (job, stage, owner, owner.attrs, owner.serial)
        try:
            result = attach(job)
        except Exception as e:
            at = placed(e, stage.sim, job)  # a refusal of the job: at the run statement that brought it
            if at is not None:
                raise at from e
            session_of(e, job.owner)  # (the plugin's failure notes the trace row the session replays)
            raise
        why = _session_problem(stage.sim, job, held.get(key))
        if why is not None:
            raise failure(registry, name, f"failed in its stage {label}", f"attach(job) {why}", stage.sim, owner,
                          at=stage)
        if job.stage is not stage and key in held:
            where = "None" if job.stage is None else f"stage {_stage_label(job.stage)}"
            raise failure(registry, name, f"failed in its stage {label}",
                          f"attach(job) left job.stage {where}, not the stage itself: a kind sets job.stage = "
                          "self in attach (the engine detaches a preempted or ended session's job through it)",
                          stage.sim, job.owner, at=stage)
        return result

    def noted_detach(job):
        was = held.pop(id(job), None)
        if was is not None:
            counts[id(was[1])] -= 1
        result = detach(job)
        why = _session_problem(stage.sim, job, was)
        if why is not None:
            raise failure(registry, name, f"failed in its stage {label}", f"detach(job) {why}", stage.sim,
                          was[2], at=stage)
        if _number(stage.present) and stage.present > counts[me]:
            raise failure(registry, name, f"failed in its stage {label}",
                          f"its count present is {_shown(stage.present)} once detach(job) returned, with "
                          f"{counts[me]} job(s) at the stage: detach(job) counts the job out of present "
                          "(self.present -= 1)", stage.sim, job.owner, at=stage)
        return result

    stage.attach = noted_attach
    stage.detach = noted_detach


def _session_problem(sim: Any, job: Any, was: tuple | None) -> str | None:
    """What a third party's stage did to the session of its ``job`` that the engine cannot go on with, ``was``
    its note at the job's arrival, ``(job, stage, owner, attrs, serial)`` (``(job, stage, None)`` for a job of
    no session; None: noted by no third party's stage).

    A kind reads ``job.owner`` and the session's attributes ``job.owner.attrs`` (docs/hooks.md); the
    session's own code, its pools' keys and the report read them again once the job completes. An attribute
    set to what is no number (a string, None) was a TypeError in the session's compiled code, a traceback
    naming no plugin; a list cut short an IndexError there; a ``job.owner`` set to None completed the job as
    a job of no session, whose session then waited for ever without a word. A number of another type (an
    int, numpy's) is taken as a Python float, as the engine's attributes are, in place."""
    if was is None:
        return None
    owner = was[2]
    if job.owner is not owner:
        whose = "no session" if owner is None else f"session {was[4]}"
        return (f"set job.owner to {_shown_owner(job.owner)}, where the job arrived with {whose}: a kind reads "
                "job.owner, it does not change it")
    if owner is None:
        return None
    attrs, serial = was[3], was[4]
    if type(owner.serial) is not int or owner.serial != serial:
        return (f"set the serial of session {serial} to {_shown(owner.serial)}: a kind reads a session, it does "
                "not change its number")
    if owner.attrs is not attrs:
        return ("replaced the session's attributes job.owner.attrs by another object: a kind reads them, and "
                "may set one to a number in place")
    return _attrs_problem(sim, owner, "job.owner.attrs", "a kind")


def _attrs_problem(sim: Any, owner: Any, via: str, who: str) -> str | None:
    """What is wrong with the attributes of session ``owner`` once a third party's code that was handed it
    returned (``via`` what it reads them as, ``who`` what it is): a list of the program's attributes, each a
    number; one of another type than a float (an int, numpy's) is made the float the engine holds, in place."""
    attrs = owner.attrs
    if type(attrs) is not list or len(attrs) != sim.nattrs:
        size = f"{len(attrs)} value(s)" if isinstance(attrs, list) else _shown(attrs)
        return (f"left the session's attributes {via} with {size}, where the program has {sim.nattrs}: {who} "
                "reads them, and may set one to a number in place")
    for i, v in enumerate(attrs):
        if type(v) is float:
            continue
        why = "not a number"
        if _number(v) or type(v) is bool or _numpy_bool(v):
            try:
                attrs[i] = float(v)
                continue
            except OverflowError:
                why = "beyond the largest double"
            except (TypeError, ValueError):
                pass
        return (f"set the attribute {sim.program.attributes[i].name} of session {owner.serial} to {_shown(v)}, "
                f"{why}: {who} reads {via}, and may set one to a number in place")
    return None


def _session_kept(sim: Any, owner: Any) -> bool:
    """Whether session ``owner``'s attributes are as the engine can read them, told fast (math.fsum, in C)
    where a third party's code is called often (an eviction order's key): a list of the program's attributes
    whose sum is a number (an int among them is taken as it is; one of text, None or beyond the largest double
    is not). A sum of inf and -inf is told again value by value (:func:`_attrs_problem`)."""
    attrs = getattr(owner, "attrs", None)
    if type(attrs) is list and len(attrs) == sim.nattrs:
        try:
            math.fsum(attrs)
            return True
        except (TypeError, OverflowError, ValueError):
            pass
    return False


def kept_session_failure(sim: Any, e: BaseException) -> PluginError | None:
    """The plugin's failure when ``e``, an exception of serQ's own code in the run of ``sim`` (none of a plugin's
    frames on it), met a session a third party's code had broken: an attribute set to what is no number, the
    list of attributes replaced or cut short, its serial changed. A kind or a policy that keeps a session it
    was handed (``self.kept = job.owner``) and changes it at a later call, when it is not the session of the job
    or the growth at hand, is not caught when it returns (:func:`_session_problem` looks at that one); the
    session's compiled code, or a pool's key, then raised a TypeError or an IndexError where it read the value,
    a traceback naming no plugin. The engine sets an attribute only to a float, so a broken one is a third
    party's doing: the failure names the run's third party (the one that built the first of its parts, when
    there are several, with the others named), the time and the session, and notes where the session read it.
    ``None`` when the run has no third party's part, or the sessions on ``e``'s traceback are whole."""
    noted = getattr(sim, "plugin_jobs", None)
    parties = getattr(noted, "parties", None)
    if not parties:
        return None
    from .session import Session

    sessions: list[Any] = []
    tb = e.__traceback__
    while tb is not None:
        for v in list(tb.tb_frame.f_locals.values()):
            if isinstance(v, Session) and not any(v is x for x in sessions):
                sessions.append(v)
        tb = tb.tb_next
    for s in reversed(sessions):  # the innermost first: the session whose code raised
        serial = s.serial
        if type(serial) is not int:
            why = (f"set the serial of a session to {_shown(serial)}: a kind or a policy reads a session, it does not "
                   "change its number")
        else:
            why = _attrs_problem(sim, s, "session.attrs", "a kind or a policy")
        if why is None:
            continue
        registry, name, label, member = parties[0]
        who = registry.plugin_of(name)
        others = sorted({lab for reg, n, lab, _m in parties[1:] if reg.plugin_of(n) is not who})
        also = f"; or the other third party's {', '.join(others)}" if others else ""
        reason = f"{why} (a session it kept from an earlier call, read again once that call had returned{also})"
        err = failure(registry, name, f"failed in its {label}", reason, sim,
                      s if type(serial) is int else None, at=member)
        compiler = getattr(sim, "compiler", None)
        if compiler is not None:
            from .compile import statement_at

            at = statement_at(compiler, e.__traceback__)
            if at is not None and at[0] is not None:
                from serq.errors import located

                head, *rest = str(err).split("\n")
                note = located(at[0], "the session read it here", getattr(sim, "source", None), kind="note")
                err = PluginError("\n".join([head, *rest, note]))
        return err
    return None


def _shown_owner(x: Any) -> str:
    from .session import Session

    return f"session {x.serial}" if isinstance(x, Session) else _shown(x)


def _check_new(sim: Any, obj: Any, kind: str, label: str, registry: Any, name: str, what: str, cls: str,
               members: str, at: Any = None) -> None:
    """Refuse ``obj``, what a third party's factory built for ``label`` (``stage s``, ``pool p[1]``), when it
    built it before for another member of the run (its stages, or its pools' policies of ``kind``), or for
    another run (a factory that caches what it built: its clock and events are that run's); noted otherwise.
    ``what``: the failure's words (``builds stage s wrongly``); ``cls`` and ``members``: the contract's
    class and whose members each need one (``StageKind``, ``stage of its kind``); ``at``: the member, as
    :func:`failure` notes it."""
    built = _noted(sim).built
    key = (kind, id(obj))
    if key in built:
        raise failure(registry, name, what, f"its factory returned the object it built for {built[key]}: a "
                      f"factory builds a new {cls} for every member of every {members}", at=at)
    if getattr(obj, "sim", sim) is not sim:
        raise failure(registry, name, what, "its factory returned an object built for another simulation: a "
                      f"factory builds a new {cls} for every member of every {members}, in every run", at=at)
    built[key] = label


#: serq_sim.policies' EvictionOrder and PreemptionPolicy, once imported (:func:`check_policy`, once a member)
_POLICY_CLASSES: list = []


def check_policy(policy: Any, registry: Any, name: str, pool: Any, what: str, shared: dict | None = None) -> Any:
    """``policy``, pool member ``pool``'s eviction order or preemption policy (``what``), refused if it is not
    one, and checked as it runs when it is a third party's. ``shared``: what the members of the pools built
    together share (a dict the build keeps for them): the judgement of a policy's class, whose code is serQ's
    or not, made once a class, not once a member (a family of 10**5 pools made it 2 * 10**5 times)."""
    classes = _POLICY_CLASSES
    if not classes:
        from .policies import EvictionOrder, PreemptionPolicy

        classes.extend((EvictionOrder, PreemptionPolicy))
    cls = classes[0] if what == "eviction order" else classes[1]
    PreemptionPolicy = classes[1]  # noqa: N806 - the class, as its name

    def label() -> str:  # (made only for a message)
        return f"pool {_label(pool.node, pool.index)}"

    if not isinstance(policy, cls):
        raise failure(registry, name, f"builds the {what} of {label()} wrongly",
                      f"its factory returned {_shown(policy)}, not a serq_sim.policies.{cls.__name__}", at=pool)
    t = type(policy)
    judged = None if shared is None else shared.get((cls, t))
    if judged is None:  # whether its class, and the method the run calls, are serQ's own
        judged = (first_party(t), first_party(t.victim if cls is PreemptionPolicy else t.key))
        if shared is not None:
            shared[cls, t] = judged
    own, own_method = judged
    if not (own and own_method):
        _noted(pool.sim).parties.append((registry, name, f"{what} of {label()}", pool))
    if not own:
        why = _base_init_problem(policy, cls)
        if why is not None:
            raise failure(registry, name, f"builds the {what} of {label()} wrongly", why, at=pool)
        # (one order's sorted entries, or one policy's pool, for two pools)
        _check_new(pool.sim, policy, what, label(), registry, name, f"builds the {what} of {label()} wrongly",
                   cls.__name__, "pool that names it", pool)
        why = _methods_problem(policy, _PREEMPTION_METHODS if cls is PreemptionPolicy else _EVICTION_METHODS)
        if why is not None:
            raise failure(registry, name, f"builds the {what} of {label()} wrongly", why, at=pool)
    if cls is PreemptionPolicy:
        if policy.requeue not in ("head", "tail"):
            raise failure(registry, name, f"builds the {what} of {label()} wrongly",
                          f"requeue is {_shown(policy.requeue)}, not 'head' or 'tail'", at=pool)
        if not own and type(policy.self_stop) is not bool:
            # read as a truth value where a grower preempts itself on a step stage: "no" or 0.5 would stop
            raise failure(registry, name, f"builds the {what} of {label()} wrongly",
                          f"self_stop is {_shown(policy.self_stop)}, not True or False", at=pool)
        if not own_method:
            _guard_victim(policy, registry, name)
            _noted(pool.sim).victims[id(policy)] = (registry, name)
    else:
        if not own_method:
            _guard_key(policy, registry, name)
        if not own:
            # the answer of every third party's order is checked, its pick its own or inherited: what else
            # it overrides (on_insert, key, …) may have changed the pool's entries the inherited pick reads
            _guard_pick(policy, registry, name)
    return policy


def _number(x: Any) -> bool:
    t = type(x)
    return t is float or t is int or (isinstance(x, numbers.Real) and not isinstance(x, bool))


def _numpy_bool(x: Any) -> bool:
    """Whether ``x`` is numpy's bool (``np.bool_``, what a comparison of numpy's numbers gives), which is no
    ``numbers.Real`` as Python's bool is: a key ``(entry.size > self.limit,)`` with a limit of numpy's was
    refused as no tuple of numbers, where the same key of Python's numbers ranks as 0 or 1."""
    import sys

    np = sys.modules.get("numpy")  # (no numpy imported: no numpy bool to be had)
    return np is not None and isinstance(x, np.bool_)


def _guard_key(order: Any, registry: Any, name: str) -> None:
    key = order.key
    pool = order.pool

    def checked_key(entry):
        size, seq, owner = entry.size, entry.seq, entry.owner
        k = key(entry)
        if entry.size is not size or entry.seq is not seq or entry.owner is not owner:
            # the pool's books are the entries' sizes (its cached units, what eviction frees), their owners
            # (whose prefix a hit finds) and their order of release: a size set to NaN left the pool caching NaN
            # and evicting nothing, one set to 1e9 evicted 352 units of entries that held 40, without a word;
            # an owner set to None was an AttributeError traceback of this module's
            field, old, new = next((f, o, n) for f, o, n in (("size", size, entry.size), ("seq", seq, entry.seq),
                                                              ("owner", owner, entry.owner)) if n is not o)
            shown = _shown_owner if field == "owner" else _shown
            raise failure(registry, name, f"failed in its eviction order {name!r} (pool {pool.name})",
                          f"key(entry) changed the entry's {field} from {shown(old)} to {shown(new)}: an order reads "
                          "the pool's entries, it does not change them (the pool's books are kept by them)",
                          order.sim, at=pool)
        if owner is not None and not _session_kept(order.sim, owner):
            why = _attrs_problem(order.sim, owner, "entry.owner.attrs", "an order")
            if why is not None:
                raise failure(registry, name, f"failed in its eviction order {name!r} (pool {pool.name})",
                              f"key(entry) {why}", order.sim, at=pool)
        if type(k) is tuple:
            for x in k:  # (a hot path under a scan: a float or an int is taken without a call)
                t = type(x)
                # a bool ranks as 0 or 1 (False first): `(not entry.dead, entry.seq)` was refused as no number
                if t is not float and t is not int and t is not bool and not _number(x) and not _numpy_bool(x):
                    break
            else:
                return k
        raise failure(registry, name, f"failed in its eviction order {name!r} (pool {pool.name})",
                      f"key(entry) returned {_shown(k)}, not a tuple of numbers", order.sim, at=pool)

    order.key = checked_key


def _guard_pick(order: Any, registry: Any, name: str) -> None:
    from .pools.model import EPS, Entry

    pick = order.pick

    def checked_pick(pool):
        e = pick(pool)
        if e is None:
            # None is for a pool that caches nothing: the engine stops making room and admits the hold all
            # the same (a pool of cap 24 held a mean of 31.5 units cached, over_cap 0, without a word)
            held = len(pool.own) + len(pool.dead)
            if held:
                why = (f"returned None while the pool caches {show_number(pool.cached)} unit(s) in {held} "
                       "entr" + ("y" if held == 1 else "ies") + " (None is for a pool that caches nothing: the "
                       "pool would hold more than its capacity)")
            elif pool.cached > EPS * max(1.0, pool.cap):
                # the units the pool counts as cached are in no entry: the order took entries out of the pool's
                # own (pool.own, pool.dead), which it reads and never changes, and they can never be evicted
                why = (f"returned None while the pool caches {show_number(pool.cached)} unit(s) in no entry of "
                       "pool.own or pool.dead: entries were taken out of them, which the engine keeps and an "
                       "order only reads (the pool would hold more than its capacity)")
            else:
                return None
        elif not isinstance(e, Entry):
            why = f"returned {_shown(e)}, not an entry of the pool"
        elif not e.alive or (pool.dead.get(e.eid) if e.dead else pool.own.get(getattr(e.owner, "serial", None))) is not e:
            why = "returned an entry that is not cached in the pool now (evicted or consumed before)"
        else:
            return e
        raise failure(registry, name, f"failed in its eviction order {name!r} (pool {pool.name})",
                      f"pick(pool) {why}", order.sim, at=pool)

    order.pick = checked_pick


def _guard_victim(policy: Any, registry: Any, name: str) -> None:
    victim = policy.victim

    def checked_victim(pool, grower):
        books = (pool.used, pool.cached, pool.reserved, pool.cap)
        try:
            v = victim(pool, grower)
        except Exception as e:  # (its failure notes the trace row the grower replays)
            session_of(e, grower)
            raise
        if (pool.used, pool.cached, pool.reserved, pool.cap) != books:
            # a policy reads the pool it is given: one that set pool.used = 0 had the pool admit beyond its
            # capacity, one that raised pool.cap had no grower preempted again, without a word
            field, old, new = next((f, o, n) for f, o, n in zip(
                ("used", "cached", "reserved", "cap"), books, (pool.used, pool.cached, pool.reserved, pool.cap))
                if n is not o and n != o)
            raise failure(registry, name, f"failed in its preemption policy {name!r} (pool {pool.name})",
                          f"victim(pool, grower) changed the pool's {field} from {_shown(old)} to {_shown(new)}: a "
                          "policy reads the pool, it does not change it (the engine keeps its books)", policy.sim,
                          grower, at=pool)
        # (the sessions it was handed or chose, as it left them: a grower whose attribute it set to text was a
        # TypeError in the session's compiled code, which names no plugin)
        for s, via in ((grower, "grower.attrs"), (None if v is grower else v, "the victim's attrs")):
            if s is None or not hasattr(s, "attrs"):
                continue
            why = _attrs_problem(policy.sim, s, via, "a policy")
            if why is not None:
                raise failure(registry, name, f"failed in its preemption policy {name!r} (pool {pool.name})",
                              f"victim(pool, grower) {why}", policy.sim, grower, at=pool)
        if v is None:
            return v
        if policy.requeue not in ("head", "tail"):
            # read at every preemption (the victim's place in the queue): one changed since the policy was
            # built, where it is checked, was taken as 'tail' without a word
            raise failure(registry, name, f"failed in its preemption policy {name!r} (pool {pool.name})",
                          f"requeue is {_shown(policy.requeue)}, not 'head' or 'tail', at a preemption",
                          policy.sim, grower, at=pool)
        if v is grower:
            return v
        if not any(s is v for s, _slot in policy.sim.preempt_candidates(pool)):
            from .session import Session

            shown = f"session {v.serial}" if isinstance(v, Session) else _shown(v)
            raise failure(registry, name, f"failed in its preemption policy {name!r} (pool {pool.name})",
                          f"victim(pool, grower) returned {shown}, which is not one of the candidates "
                          "(sim.preempt_candidates(pool)), the grower, or None", policy.sim, grower, at=pool)
        return v

    policy.victim = checked_victim


def _flow_stage(sim: Any, k: int) -> str:
    """The name of stage ``k`` of a share policy's call: the stages of the flows, in the order they first
    appear in them (serq_sim.stages.FlowNetwork.settle numbers them so)."""
    seen: dict[Any, int] = {}
    for job in sim.flow_network.flows:
        for st in job.stages:
            seen.setdefault(st, len(seen))
    for st, i in seen.items():
        if i == k:
            return _stage_label(st)
    return str(k)


def guard_share(policy: Any, registry: Any, name: str, sim: Any) -> Any:
    """A third party's share policy, its rates checked at every call."""
    if first_party(policy):
        return policy

    def checked_share(flows, caps):
        # the policy is given copies: its rates are checked against the flows and capacities of the engine's
        # call (a policy that set caps[k] = 100 and returned rates of 50 on a ps(1) passed the check it had
        # changed, and served the stage at 50 times its capacity, without a word; one that popped a flow
        # returned a rate short that the check, of len(flows), let pass)
        rates = policy([list(f) for f in flows], list(caps))  # (an exception here is named at the `share`: _subject)
        if getattr(rates, "ndim", None) == 1 and callable(getattr(rates, "tolist", None)):
            rates = rates.tolist()  # a numpy array of rates: its numbers as Python's
        if not isinstance(rates, (list, tuple)) or len(rates) != len(flows):
            n = len(rates) if isinstance(rates, (list, tuple)) else None
            got = _shown(rates) if n is None else f"{n} rate(s)"
            raise failure(registry, name, f"failed in its share policy {name!r}",
                          f"it returned {got} for {len(flows)} flow(s): one rate per flow", sim, at=SHARE)
        plain = True
        for r in rates:
            if not _number(r) or not r >= 0:
                raise failure(registry, name, f"failed in its share policy {name!r}",
                              f"it returned the rate {_shown(r)}: a rate is a number at least 0 (or inf)", sim,
                              at=SHARE)
            if type(r) is not float:
                plain = False
        # the flows at a stage carry no more than its capacity (language.txt: a stage's utilisation is "the
        # capacity its flows carry, Σ rate / φ"): rates of 10 on a ps(1) served it at 20 times its capacity,
        # the runs' service 0.1 where it is 2, without a word
        carried: dict[int, float] = {}
        for f, r in zip(flows, rates):
            for k in f:
                carried[k] = carried.get(k, 0.0) + r
        for k, total in carried.items():
            cap = caps[k]
            if total > cap and not total <= cap * (1.0 + 1e-9):
                shown = show_number(total)
                if shown == show_number(cap):  # (a sum just above, which the six digits shown round to it)
                    shown = repr(float(total))
                raise failure(registry, name, f"failed in its share policy {name!r}",
                              f"its rates at stage {_flow_stage(sim, k)} add up to {shown}, above "
                              f"the stage's capacity {show_number(cap)}: the flows at a stage carry at most its "
                              "capacity", sim, at=SHARE)
        # numpy's float64 (a float) or an int: taken as Python's float, which the report encodes (a float64
        # rate reached the report's figures, and --json failed on it with a TypeError)
        return rates if plain else [float(r) for r in rates]

    global _CHECKED_SHARE_CODE
    _CHECKED_SHARE_CODE = checked_share.__code__
    checked_share.provided = (registry, name)  # (share_named: who gives a flow no rate)
    return checked_share


def share_named(policy: Any) -> str | None:
    """``the share policy 'fair' of the plugin acme (serq-acme 0.3.0)`` for a third party's policy (as
    :func:`guard_share` wraps it), None for serQ's own: what the warning of sessions waiting for ever names
    when it gives their flows no rate (:func:`serq_sim.engine._held_at_stages`)."""
    provided = getattr(policy, "provided", None)
    if provided is None:
        return None
    registry, name = provided
    return f"the share policy {name!r} of the plugin {registry.provider(name)}"


#: the code of :func:`guard_share`'s wrapper (the same for every policy), whose frame on a traceback is a share
#: policy's call (:func:`_subject`)
_CHECKED_SHARE_CODE: Any = None


# ---------------------------------------------------------------------------------------------------
# What a third party's stage kind asks of the engine
# ---------------------------------------------------------------------------------------------------


#: where a job is that no third party's stage noted (at a built-in stage, or at none)
_NOWHERE = object()


class _Noted:
    """A run's third-party stages and the jobs each holds now, ``id(job) -> (job, stage)``, and the stages
    its third parties' factories built."""

    def __init__(self) -> None:
        self.stages: set[Any] = set()
        self.jobs: dict[int, tuple[Any, Any]] = {}
        #: id(stage) -> how many of :attr:`jobs` are at it (what its count ``present`` is, past a completion)
        self.counts: dict[int, int] = {}
        #: a third party's stage -> ``(registry, name, label)``: what names its plugin (:func:`marked_for_ever`)
        self.owners: dict[int, tuple[Any, str, str]] = {}
        #: what the third parties' factories built for the run, ``(what, id(object)) -> label``: its stages
        #: (check_stage), eviction orders and preemption policies (check_policy)
        self.built: dict[tuple[str, int], str] = {}
        #: a third party's preemption policy whose own ``victim`` the run asks -> ``(registry, name)``: what names
        #: its plugin where a grower it chose no victim for waits for ever (:func:`no_victim`)
        self.victims: dict[int, tuple[Any, str]] = {}
        #: ``(span, session)`` of the statement reading a third party's stage's observable now (:func:`reading`)
        self.reader: tuple[Any, Any] | None = None
        #: what the run's third parties built that is handed sessions, ``(registry, name, label, member)``, in
        #: the order built: what names the plugin whose kept session broke (:func:`kept_session_failure`)
        self.parties: list[tuple[Any, str, str, Any]] = []


def _noted(sim: Any) -> _Noted:
    noted = getattr(sim, "plugin_jobs", None)
    if noted is None:
        noted = sim.plugin_jobs = _Noted()
    return noted


def _stage_label(st: Any) -> str:
    name = getattr(st, "name", None)
    return name if isinstance(name, str) else _shown(st)


def marked_for_ever(sim: Any, marked: list, message: str) -> PluginError | None:
    """The no-progress guard of the settle tripped with ``marked`` the objects that asked for a settle last: when
    a third party's stage kind is among them (one that marks itself again in every settle), the failure of its
    plugin, named as every other (``failed in its stage s: no progress: …``), where the run's error named the
    stage and its kind, not the plugin to run without; ``None`` otherwise."""
    owners = _noted(sim).owners
    for x in marked:
        found = owners.get(id(x))
        if found is not None:
            registry, name, label = found
            return failure(registry, name, f"failed in its stage {label}", message, sim, at=x)
    return None


def no_victim(sim: Any, pool: Any) -> str:
    """For a session growing at ``pool`` when the run ends waiting for ever: ``, where the preemption policy
    @NAME of the plugin P (DIST VERSION) chose no victim`` when the pool's policy is a third party's whose
    ``victim`` the run asked (it answered None, the grower waiting), else nothing. The warning said ``1 growing
    at p (session 0)``, naming neither the policy nor its plugin."""
    noted = getattr(sim, "plugin_jobs", None)
    found = None if noted is None else noted.victims.get(id(getattr(pool, "preempt", None)))
    if found is None:
        return ""
    registry, name = found
    return f", where the preemption policy @{name} of the plugin {registry.provider(name)} chose no victim"


def held_for_ever(sim: Any, stuck: Any) -> list[tuple[str, int]]:
    """The sessions (not in ``stuck``) whose runs a third party's stage holds when no event is left, by stage:
    ``("2 at stage s, whose kind @k of the plugin acme (serq-acme 0.3.0) will never complete them (sessions
    0, 1, in the run at P.sq:4:11)", 2)``, where the warning said "at a stage that will never complete
    them", naming neither; the run statements they wait in, as a run-time error names its statement."""
    noted = _noted(sim)
    by_stage: dict[tuple[int, bool], list[int]] = {}
    # the places of the runs they wait in, by stage, in sessions' order
    runs: dict[tuple[int, bool], dict[str, None]] = {}
    spans = getattr(sim, "spans", ())
    for job, stage, *_ in noted.jobs.values():
        owner = job.owner
        if owner is not None and owner not in stuck and owner.job is job and id(stage) in noted.owners:
            # a run of infinite work is the program's, which no kind completes: told as at serQ's own stages
            key = (id(stage), job.total == math.inf)
            by_stage.setdefault(key, []).append(owner.serial)
            span = spans[job.span] if 0 <= job.span < len(spans) else None
            if span is not None:
                runs.setdefault(key, {})[place(span)] = None
    from .engine import _shown_sessions, runs_named

    out = []
    for key, serials in by_stage.items():
        registry, name, label = noted.owners[key[0]]
        why = ("which will never complete them: their runs' work is infinite" if key[1] else
               f"whose kind @{name} of the plugin {registry.provider(name)} will never complete them")
        out.append((f"{len(serials)} at stage {label}, {why} ({_shown_sessions(serials)}"
                    f"{runs_named(runs.get(key, ()))})", len(serials)))
    return out


class ContractError(ValueError):
    """A plugin asked the engine what its contract does not allow (``sim.at`` of a time before now, or NaN;
    ``sim.job_done`` of a job that is not its session's current run). Raised in the plugin's call, so
    :func:`serq.plugins.plugin_failure` names the plugin and its line; the stage that asked is noted on it
    (:func:`subject_of`), and its failure says the time and the stage's place as :func:`failure` does
    (:func:`run_failure`)."""


def subject_of(e: BaseException, member: Any) -> None:
    """Note on ``e``, an exception a plugin's code raised breaking a contract at a pool or a stage
    (``member``: the stage that called ``sim.job_done``, the stage whose method an event calls back), that
    member, for :func:`noted_subject` once it is the plugin's failure."""
    if member is not None and getattr(e, "serq_subject", None) is None:
        try:
            e.serq_subject = member  # type: ignore[attr-defined]
        except AttributeError:  # (an exception of __slots__: without the note)
            pass


@contextlib.contextmanager
def reading(sim: Any, span: Any, session: Any) -> Iterator[None]:
    """The block in which the statement at ``span`` of ``session`` (None: of none) reads an observable of a third
    party's stage (``queue``, ``busy``, ``work``; Simulation.read_by): a failure of its plugin there, a value out of
    range (:func:`failure`) or an exception of its own (:func:`run_failure`), names the session with the time and
    notes the statement, as a run-time error of the statement does. It named the stage's declaration and the
    time alone, so a ``choose`` reading a NaN ``work()`` did not say which session or statement."""
    noted = _noted(sim)
    before = noted.reader
    noted.reader = (span, session)
    try:
        yield
    except BaseException as e:
        session_of(e, session)
        if span is not None and getattr(e, "serq_read", None) is None:
            try:
                e.serq_read = span  # type: ignore[attr-defined]
            except AttributeError:  # (an exception of __slots__: without the note)
                pass
        raise
    finally:
        noted.reader = before


def _read_note(sim: Any, span: Any, session: Any) -> str:
    """The note of the statement at ``span`` that read the stage (:func:`reading`), or nothing."""
    if span is None:
        return ""
    from serq.errors import located

    serial = getattr(session, "serial", None)
    said = f"session {serial} read it here" if isinstance(serial, int) else "read here"
    return "\n" + located(span, said, getattr(sim, "source", None), kind="note")


def run_failure(message: str, e: BaseException, sim: Any) -> str:
    """``message``, :func:`serq.plugins.plugin_failure`'s of ``e`` raised in a plugin's code in the run, as
    :func:`failure` says a contract's breach: its first line ends with the simulated time (after the plugin's
    line) and the session whose job or growth it was, when there is one (:func:`_session_at`); then the
    declaration of what named the plugin (:func:`_subject`: the stage of its stage kind, the pool of its
    eviction order or preemption policy, the program's ``share``) and the trace row of that session, each
    noted when known. A ``ValueError`` raised in a plugin's stage kind named neither the time nor the stage
    (``failed in Boom.attach during the run: RuntimeError: … at FILE:LINE`` alone); a contract's breach, the
    time alone. ``sim`` is None for a failure while the run is built (its factories'), which has no time."""
    if sim is None:
        return message
    session = _session_at(e)
    head, nl, rest = message.partition("\n")
    message = f"{head} ({_when(sim, session)}){nl}{rest}"
    subject = _subject(e, sim)
    note = declared_share(sim) if subject is SHARE else declared(subject)
    return message + note + _read_note(sim, getattr(e, "serq_read", None), session) + _replayed(sim, session)


def _subject(e: BaseException, sim: Any) -> Any:
    """What the plugin's failure ``e`` in the run of ``sim`` concerns, for its note: the member
    :func:`subject_of` noted on ``e``; else, on ``e``'s traceback from its innermost frame out, the first
    frame of a third party's share policy's call (:data:`SHARE`), or of a method of a stage kind, an eviction
    order or a preemption policy of this run (``self``; an order's or a policy's pool); else None."""
    noted = getattr(e, "serq_subject", None)
    if noted is not None:
        return noted
    from .policies import EvictionOrder, PreemptionPolicy
    from .stages import StageKind

    frames = []
    tb = e.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):
        if frame.f_code is _CHECKED_SHARE_CODE:
            return SHARE
        if not frame.f_code.co_argcount:
            continue
        me = frame.f_locals.get(frame.f_code.co_varnames[0])
        if isinstance(me, StageKind) and getattr(me, "sim", None) is sim:
            return me
        if isinstance(me, (EvictionOrder, PreemptionPolicy)) and getattr(me, "sim", None) is sim:
            return getattr(me, "pool", None)
    return None


def _seems_within(x: Any, lo: float, hi: float) -> bool:
    """Whether ``x``, a time a third party gave outside ``[lo, hi]``, would seem inside it were the bounds shown
    as every number of a message is (``show_number``'s %g): its digits are a bound's, or it lies between the
    bounds as shown. The breach then shows the bounds by all their digits. (False for what is no number, or
    NaN.)"""
    if not _number(x):
        return False
    shown_lo, shown_hi = show_number(lo), show_number(hi)
    return show_number(x) in (shown_lo, shown_hi) or float(shown_lo) <= x <= float(shown_hi)


def guard_engine(sim: Any) -> None:
    """``sim.at`` and ``sim.job_done`` checked, for a run with a third party's stage kind or policy."""
    at = sim.at
    done = sim.job_done
    noted = _noted(sim)
    held = noted.jobs
    guarded = noted.stages
    counts = noted.counts
    #: what is wrong with a callback, by its function (a method's and whether it is bound): judged once, as
    #: the engine calls it, ``callback(arg)``; a callback that cannot be was a TypeError raised by the
    #: engine's own call when the event came due, with no frame of the plugin's to name it
    judged: dict[Any, str | None] = {}

    def breach(message: str, member: Any) -> ContractError:
        e = ContractError(message)
        subject_of(e, member if any(member is x for x in guarded) else None)
        return e

    #: the latest time the engine's clock was seen at here: the engine's clock never goes back, so a clock seen
    #: before it was set back by a third party's code (sim.now = sim.now - 5: every response after it was 5 short,
    #: negative ones among them, and its events were scheduled in the past, without a word)
    seen = [sim.now]

    def clock_problem() -> str | None:
        now = sim.now
        if now >= seen[0]:
            seen[0] = now
            return None
        why = "NaN is no time" if now != now else "the clock cannot go back"
        return (f"sim.now is {_shown(now)}, where the clock had reached t={show_number(seen[0], True)}: {why} (a "
                "kind reads sim.now, it does not set it)")

    def checked_at(t, cb, arg=None):
        why = clock_problem()
        if why is not None:
            raise breach(why, getattr(cb, "__self__", None))
        if not _number(t):  # (text or None was a TypeError of the comparison below: '>=' not supported)
            raise breach(f"sim.at({_shown(t)}, …): {_shown(t)} is not a time (a number from now on)",
                         getattr(cb, "__self__", None))
        if not t >= sim.now:
            # now by all its digits where %g's would not tell t from it (t one unit in the last place before it)
            exact = _seems_within(t, sim.now, math.inf)
            raise breach(f"sim.at({t!r}, …): NaN is not a time" if t != t else
                         f"sim.at({t!r}, …): an event before now (t={show_number(sim.now, exact)}): the clock "
                         "cannot go back", getattr(cb, "__self__", None))
        func = getattr(cb, "__func__", cb)
        try:
            why = judged[func, func is not cb]
        except KeyError:
            why = judged[func, func is not cb] = call_problem(cb, "callback(arg)")
        except TypeError:  # a callable object that cannot be a key: judged at every call
            why = call_problem(cb, "callback(arg)")
        if why is not None:
            raise breach(f"sim.at({t!r}, …): the callback {why}, as the engine calls it when the event comes due",
                         getattr(cb, "__self__", None))
        return at(t, cb, arg)

    from .stages import Job

    def checked_done(st, job):
        try:
            why = clock_problem()
            if why is not None:
                raise ContractError(f"sim.job_done({_stage_label(st)}, job): {why}")
            _check_done(st, job)
        except ContractError as e:  # (its failure notes the stage and the trace row the job's session replays)
            placed_e = breach(str(e), st)
            session_of(placed_e, getattr(job, "owner", None))
            raise placed_e from None
        return done(st, job)

    def _check_done(st, job):
        if not isinstance(job, Job):
            # (the two swapped, job_done(job, self), was "'K' object has no attribute 'owner'")
            swapped = ": the stage and the job swapped" if isinstance(st, Job) else ""
            raise ContractError(f"sim.job_done(stage, job) was given {_shown(job)} for its job, not a "
                                f"serq_sim.stages.Job{swapped}")
        owner = job.owner
        if owner is not None and owner.job is not job:
            raise ContractError(f"sim.job_done({getattr(st, 'name', '?')}, job): the job of session "
                             f"{owner.serial} is not its session's current run (completed twice, or after it "
                             "left the stage: check job.stage is self when its event fires)")
        # the stage it completes at is the one it arrived at: another's completions, wait and service would
        # count it (a third party's stage notes its jobs as they arrive: _guard_jobs)
        was = held.pop(id(job), None)
        why = _session_problem(sim, job, was)
        if why is not None:
            registry, name, label = noted.owners.get(id(was[1]), (None, "", ""))
            if registry is not None:  # (a stage whose completion broke it: its plugin names it)
                raise failure(registry, name, f"failed in its stage {label}", f"the job completed (sim.job_done("
                              f"{label}, job)) after it {why}", sim, was[2], at=was[1])
            raise ContractError(f"sim.job_done({_stage_label(st)}, job): {why}")
        owner = job.owner
        at_stage = None if was is None else was[1]
        if at_stage is not None:
            counts[id(at_stage)] -= 1
        if at_stage is None and st in guarded:
            at_stage = _NOWHERE
        if at_stage is not None and at_stage is not st:
            whose = f"session {owner.serial}" if owner is not None else "an ownerless job"
            label = _stage_label(st)
            if at_stage is _NOWHERE:  # (a detach that completes the job it is told has left: a preempted run)
                raise ContractError(f"sim.job_done({label}, job): the job of {whose} is not at {label}: it has "
                                    "left the stage (detach(job)), or never arrived there")
            raise ContractError(f"sim.job_done({label}, job): the job of {whose} is at stage "
                                f"{_stage_label(at_stage)}, not at {label}: a job completes at the stage it "
                                "arrived at")
        # its wait and service are read from job.enqueued (set by the engine) and job.started (the kind's):
        # a start before its arrival or after now was a negative wait or service in the report, NaN a NaN one
        started = job.started
        if started is not None and not (_number(started) and job.enqueued <= started <= sim.now):
            # the bounds by all their digits where %g's would not tell the start from them: a start one unit in
            # the last place before an arrival at 1/3 was told 'job.started is 0.33333333333333326, not a time
            # from the job's arrival (t=0.333333)', which it seemed to be
            exact = _seems_within(started, job.enqueued, sim.now)
            raise ContractError(f"sim.job_done({_stage_label(st)}, job): job.started is {_shown(started)}, not a "
                                f"time from the job's arrival (t={show_number(job.enqueued, exact)}) to now "
                                f"(t={show_number(sim.now, exact)})")
        # the job counted out of present first (the report's present, utilisation by Little's law, and
        # queue(s) read it): a kind that did not counted every job it ever completed, and the report's
        # present of an infinite server at load 1 was 49, not 1, with no word
        at = counts.get(id(st))
        if at is not None and _number(st.present) and st.present > at:
            raise ContractError(f"sim.job_done({_stage_label(st)}, job): the stage's count present is "
                                f"{_shown(st.present)} with {at} job(s) at it once this one completes: a completion "
                                "counts its job out of present first (self.present -= 1; job.stage = None; "
                                "sim.job_done(self, job))")

    sim.at = checked_at
    sim.job_done = checked_done
