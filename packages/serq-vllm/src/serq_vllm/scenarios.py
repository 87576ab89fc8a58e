"""The oracle scenarios: listing, reading, and running them through ``vllm_request``.

A scenario (see ``oracle/README.md``) is run on the step clock: the program ``programs/scenario.sq``
(the vLLM engine of ``lib/vllm.sq`` with cost 1) is compiled with the scenario's settings as ``let``
overrides and its serving order as a definition, and each request, or each chain of turns, becomes one
session given explicitly in the IR (a ``Preset``): it arrives at the request's ``arrive`` and each
``turn;`` loads the next request's ``prompt``, ``o`` and ``think``. The answer is read back from the
observes ``vllm_request`` records.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import msgspec
from serq import UserError
from serq.errors import shown_path
from serq.files import path_exists, path_join, path_str

from .real import ScenarioError, check_scenario, config_out, policy, serve_form

if TYPE_CHECKING:
    from pathlib import Path

#: the oracle's folder and the scenario program as strings (what ``str(ORACLE)``, ``str(PROGRAM)`` are):
#: running a scenario imports no pathlib (about 3 ms of its start-up)
_HERE = os.path.dirname(path_str(__file__)) or "."
_ORACLE = path_join(_HERE, "oracle")
_PROGRAM = path_join(path_join(_HERE, "programs"), "scenario.sq")
#: the program of a scenario under vLLM's priority policy (``"policy": "priority"``)
_PRIORITY_PROGRAM = path_join(path_join(_HERE, "programs"), "scenario_priority.sq")


def __getattr__(name: str) -> Any:
    # ORACLE and PROGRAM, pathlib.Path objects, are made on first use (PEP 562)
    if name in ("ORACLE", "PROGRAM"):
        from pathlib import Path

        value = globals()[name] = Path(_ORACLE if name == "ORACLE" else _PROGRAM)
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class ScenarioFile:
    name: str  # group/name
    path: Path
    summary: str


def list_scenarios() -> list[ScenarioFile]:
    """Every scenario shipped (those with an answer beside them), by group then name."""
    from pathlib import Path

    out = []
    for path in sorted(Path(_ORACLE).glob("*/*.json")):
        if path.name.endswith((".out.json", ".target.json")) or not path.with_suffix(".out.json").exists():
            continue
        sc = json.loads(path.read_text(encoding="utf-8"))  # UTF-8 whatever the locale
        reqs = sc.get("requests", [])
        bits = [f"{len(reqs)} request(s)", f"budget {sc.get('budget')}", f"{sc.get('num_blocks')} blocks"]
        if sc.get("chunk"):
            bits.append(f"chunk {sc['chunk']}")
        if sc.get("prefix_caching"):
            bits.append("prefix caching")
        if sc.get("policy") == "priority":
            bits.append("priority policy")
        if "serve" in sc:
            bits.append(f"serve by ({sc['serve']})")
        out.append(ScenarioFile(f"{path.parent.name}/{path.stem}", path, ", ".join(bits)))
    return out


def answer_path(path: Path) -> Path:
    return path.with_name(path.name[: -len(".json")] + ".out.json")


def read_scenario(file: str | Path) -> dict[str, Any]:
    """A scenario from a path, or from a name ``serq vllm scenarios`` lists (``vllm/preempt``)."""
    p = scenario_path(file)
    from serq.jsonin import read_json

    try:  # a fault of a value is located at its line and column, the line quoted with a caret
        return read_json(p, "a scenario", check=check_scenario)
    except ScenarioError as e:  # (one read_json did not place)
        raise UserError(f"{shown_path(p)}: {e}") from None


def scenario_path(file: str | Path) -> str:
    """The file of a scenario given as a path, or as a name ``serq vllm scenarios`` lists."""
    p = path_str(file)
    if not path_exists(p):
        named = _shipped(os.fspath(file))  # (as given: path_str spells generated//x as generated/x)
        if named is not None:
            p = named
        else:
            from glob import glob

            from serq.errors import did_you_mean

            shipped = [n for q in glob(path_join(path_join(_ORACLE, "*"), "*.json"))
                       if _shipped(n := f"{os.path.basename(os.path.dirname(q))}/{os.path.basename(q)[:-5]}")]
            raise UserError(f"{shown_path(file)}: no such scenario file or shipped scenario (see `serq vllm scenarios`)"
                            + did_you_mean(str(file), shipped))
    return p


def _shipped(name: str) -> str | None:
    """The file of the scenario ``name`` when it is exactly a name :func:`list_scenarios` lists, ``GROUP/NAME``
    (one folder of the oracle, one scenario in it with its answer beside it), else None: the oracle's folder
    joined to any text took ``generated//chunk_many`` and ``../oracle/generated/chunk_many`` as shipped
    names that no listing has."""
    group, slash, stem = name.partition("/")
    if not (slash and group and stem) or "/" in stem or "\\" in name or group in (".", "..") or stem in (".", "..") \
            or stem.endswith((".out", ".target")):
        return None
    named = path_join(path_join(_ORACLE, group), f"{stem}.json")
    answer = path_join(path_join(_ORACLE, group), f"{stem}.out.json")
    return named if os.path.isfile(named) and os.path.isfile(answer) else None


def _chains(sc: dict[str, Any]) -> list[list[tuple[int, dict[str, Any]]]]:
    """Requests grouped into sessions (chains of turns), each a list of (request index, request)."""
    sessions: dict[Any, list[tuple[int, dict[str, Any]]]] = {}
    order: list[Any] = []
    for i, r in enumerate(sc["requests"]):
        key = ("s", r["session"]) if "session" in r else ("r", i)
        if key not in sessions:
            sessions[key] = []
            order.append(key)
        sessions[key].append((i, r))
    chains = [sorted(sessions[k], key=lambda ir: ir[1].get("turn", 0)) for k in order]
    # Sessions are numbered in arrival order (those arriving together: in request order).
    chains.sort(key=lambda ch: (float(ch[0][1].get("arrive", 0)), ch[0][0]))
    return chains


def scenario_program(sc: dict[str, Any], pm: Any = None):
    """The IR of a scenario: ``programs/scenario.sq`` with the scenario's settings and sessions, and the
    sessions' chains of requests (in session order). Raises ScenarioError for a scenario it does not model
    (``check_scenario``). ``pm``: the plugin manager whose parts compile it (default: the installed ones).

    The program before its sessions depends only on the scenario's settings, so it comes from the compile
    cache (:mod:`serq_frontend.cache`) when a scenario of the same settings ran before."""
    check_scenario(sc)
    return _program(sc, pm)


#: the attributes each turn of a scenario's session loads (the priority program's, prio and rid besides)
_SLOTS = ("idx", "prompt", "o", "think_time", "more")


def _program(sc: dict[str, Any], pm: Any):
    """:func:`scenario_program` of a scenario ``check_scenario`` passed."""
    from serq_frontend.cache import load
    from serq_ir import nodes as n

    sets = {
        "B": float(sc["budget"]), "max_seqs": float(sc["max_seqs"]), "bs": float(sc["block_size"]),
        "blocks": float(sc["num_blocks"] - 1), "C": float(sc.get("chunk") or 0),
        "caching": 1.0 if sc.get("prefix_caching") else 0.0,
    }
    if policy(sc) == "priority":
        # vLLM's priority policy (programs/scenario_priority.sq): no serving order (check_scenario refuses one)
        path, defs, names = _PRIORITY_PROGRAM, {}, _SLOTS + ("prio", "rid")
    else:
        # the order in the spelling the bridge reads it in (a blank of the scenario's own, a no-break space say,
        # is no blank of the language)
        path, names = _PROGRAM, _SLOTS
        defs = {"serve_key": serve_form(sc["serve"]) if "serve" in sc else "admission"}
    program = load(path, sets=sets, defs=defs, pm=pm)
    slot = {a.name: i for i, a in enumerate(program.attributes)}
    for name in names:
        if name not in slot:
            raise RuntimeError(f"{os.path.basename(path)} does not set {name}")
    s_idx, s_prompt, s_o, s_think, s_more = (slot[k] for k in _SLOTS)
    SlotValue, Preset = n.SlotValue, n.Preset
    chains = _chains(sc)
    if len(names) > len(_SLOTS):
        # each request's priority, and the place of its request id, str(i), among the scenario's in the order
        # vLLM compares them (as strings: "10" before "2"), the heap's last key (Request.__lt__)
        s_prio, s_rid = slot["prio"], slot["rid"]
        n_req = len(sc["requests"])
        rid = [0.0] * n_req
        for k, i in enumerate(sorted(range(n_req), key=str)):
            rid[i] = float(k)
    presets = []
    for chain in chains:
        turns = []
        last = len(chain) - 1
        for k, (i, r) in enumerate(chain):
            more = k < last
            turn = [
                SlotValue(slot=s_idx, value=float(i)),
                SlotValue(slot=s_prompt, value=float(r["prompt"])),
                SlotValue(slot=s_o, value=float(r["out"])),
                SlotValue(slot=s_think, value=float(chain[k + 1][1].get("think", 0)) if more else 0.0),
                SlotValue(slot=s_more, value=1.0 if more else 0.0),
            ]
            if len(names) > len(_SLOTS):
                turn += [SlotValue(slot=s_prio, value=float(r.get("priority", 0))),
                         SlotValue(slot=s_rid, value=rid[i])]
            turns.append(turn)
        presets.append(Preset(at=float(chain[0][1].get("arrive", 0)), turns=turns))
    workload = msgspec.structs.replace(program.workload, presets=presets)
    return msgspec.structs.replace(program, workload=workload), chains


def run_scenario(sc: dict[str, Any], pm: Any = None) -> dict[str, Any]:
    """Run a scenario and answer in the oracle's conventions (``pm``: as :func:`scenario_program`)."""
    check_scenario(sc)
    return _run(sc, pm)


def _run(sc: dict[str, Any], pm: Any) -> dict[str, Any]:
    """:func:`run_scenario` of a scenario ``check_scenario`` passed (``serq vllm scenario`` runs what
    :func:`read_scenario` checked: a 1 000-request scenario's check is a few milliseconds).

    What it holds per request is kept to what the answer needs (docs/vllm.md, "The oracle": some 2.2 KB a
    request at the peak, where it was 2.8). The program it builds, whose presets are one per session with five
    numbers a turn, is handed to the run and not kept: the run types a copy of its own
    (``serq_ir.codec.checked``), and the presets were held twice. The chains of requests are let go before the
    run, each session's request indices kept (the chains are found again from the scenario for an error). The
    samples the answer reads are taken from the report into lists by request index, and the report (the run's
    sessions, samples and program) let go before the answer's objects are made, their keys made once for the
    four fields."""
    from serq_sim import run

    too_many = _beyond_memory(len(sc["requests"]))
    if too_many is not None:
        raise too_many
    box = [_program(sc, pm)]  # (program, chains in session (serial) order), only in the box
    horizon = box[0][0].run.horizon
    # a request whose earliest end is past the horizon is refused before the run (which would simulate up to
    # the horizon's million steps to say the same)
    past = _past_horizon(sc, box[0][1], horizon)
    if past is not None:
        raise past
    # the request index of each session's turns: by_session[serial][turn - 1]
    by_session = [[i for i, _ in chain] for chain in box[0][1]]
    report = run(box.pop()[0], pm=pm)  # (the call holds the program alone: the run's copy replaces it)
    _stopped(report)
    n_req = len(sc["requests"])
    first = _samples(report, "first_token", by_session, n_req)
    done = _samples(report, "done", by_session, n_req, last=True)
    cached = _samples(report, "hit", by_session, n_req)
    preempted_counts = _samples(report, "preempted", by_session, n_req, last=True)
    total_pre = sum(p.preemptions for p in report.result.pools)
    del report, by_session
    missing = [i for i in range(n_req) if done[i] is None]
    if missing:
        raise _unfinished(sc, _chains(sc), missing, horizon)
    inf = float("inf")
    order = sorted(range(n_req), key=lambda i: (inf if first[i] is None else first[i], i))
    keys = [str(i) for i in range(n_req)]  # (one string a request, for the four objects)

    def counts(values: list[Any], indices: Any) -> dict[str, int]:
        return {keys[i]: int(round(values[i])) for i in indices}

    def or_0(values: list[float | None]) -> list[float]:  # (a request with no sample counts 0)
        return [0.0 if v is None else v for v in values]

    return {
        "first": counts(first, order),
        "done": counts(done, order),
        "preempted": counts(or_0(preempted_counts), range(n_req)),
        "cached": counts(or_0(cached), order),
        "preemptions": int(total_pre),
        "steps": int(round(max(done))) + 1,
        "config": config_out(sc),
    }


def _samples(report: Any, name: str, by_session: list[list[int]], n_req: int, last: bool = False) -> list[float | None]:
    """The samples of observe ``name`` by request index (``by_session[serial][turn - 1]``): the first of a
    request, or with ``last`` its last; None for none. The engine's sample buffers are read as they are (no
    numpy), in one pass."""
    ob = report.observe(name)
    out: list[float | None] = [None] * n_req
    n_sessions = len(by_session)
    for sess, turn, v in zip(ob.buffer("sessions"), ob.buffer("turns"), ob.buffer("values")):
        if 0 <= sess < n_sessions:
            turns = by_session[sess]
            if 0 < turn <= len(turns):
                key = turns[turn - 1]
                if last or out[key] is None:
                    out[key] = v
    return out


#: what a scenario's request takes at the run's peak (docs/vllm.md, "The oracle": some 2.2 KB, measured at 10**5
#: requests; 2.7 GB of resident memory at 10**6)
REQUEST_BYTES = 2200


def _beyond_memory(n_req: int) -> UserError | None:
    """The error of a scenario whose ``n_req`` requests would take more memory at the run's peak
    (:data:`REQUEST_BYTES` each) than the memory guard lets the run have (serq_sim.memguard: half the memory
    available, or a ulimit's room), or ``None``. The guard stops a run that grows past it, but the program
    of the scenario's sessions is built before the run, some 500 bytes a request: a scenario of 10**7
    requests (a file of 210 MB) took gigabytes before any guard looked, and would have needed some 22 GB."""
    from serq_sim import memguard

    guard = memguard.memory_guard()
    if guard is None:
        return None
    try:
        fields = memguard._statm()
    except OSError:
        return None
    def size(n: int) -> str:
        return f"{n / 2**20:.0f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"

    need = n_req * REQUEST_BYTES
    for field, bound, limit, name in guard.limits:
        room = max(bound - int(fields[field]) * guard.page, 0)
        if need > room:
            return UserError(
                f"the scenario's {n_req} requests would take some {size(need)} at the run's peak (about "
                f"{REQUEST_BYTES} bytes a request), more than the {size(room)} the memory guard leaves the run of "
                f"the {size(limit)} {name}: no answer (a scenario of fewer requests, or more memory for the run: "
                "SERQ_MEMORY_SHARE)")
    return None


def _stopped(report: Any) -> None:
    """Raise for a run that stopped before its end, whose requests left unfinished say nothing of the
    scenario: a signal's as the signal (:func:`serq.signals.run_stopped`: KeyboardInterrupt, Terminated for
    SIGTERM; the command's status 130 or 143, as any command's), a bound's (the memory guard's) a UserError
    quoting the run's note. Both were told as requests that 'did not finish by step 1000000, the scenario program's
    horizon', status 1."""
    r = report.result
    if r.partial is None and not r.interrupted:
        return
    from serq.signals import run_stopped

    stop = run_stopped(r.partial or "interrupted")  # (interrupted with no reason: as Ctrl-C)
    if stop is not None:
        raise stop
    said = next((n.removeprefix("note: ") for n in r.notes if n.startswith("note: stopped")), None)
    said = (said or f"stopped ({r.partial})").removesuffix("; the figures cover what was simulated")
    hint = " (a scenario of fewer requests, or more memory for the run: SERQ_MEMORY_SHARE)" if r.partial == "memory" \
        else ""
    raise UserError(f"the scenario's run {said}, before its requests finished: no answer{hint}")


def _earliest(sc: dict[str, Any], chains: list) -> dict[int, tuple[int, int, int]]:
    """Each request's earliest submission, its prefill steps and its earliest end, by request index: the
    bound :func:`_past_horizon` refuses a scenario by before its run and :func:`_unfinished` locates the
    error of a run by after it.

    A request is submitted at its ``arrive`` at the earliest, a turn also ``think`` after its turn before
    ends (oracle README, "The step clock": step k runs from k to k + 1, ``first`` is the end of the step
    that completed the prefill, ``done`` of the one that produced the last token). A step schedules at most
    ``budget`` tokens, so a request submitted at s completes its prompt of P tokens at s + ceil(P / budget)
    at the earliest (s + 1 with prefix caching, where all but its last token may be cached), and one step
    produces at most one token of it: its ``out`` tokens end at s + ceil(P / budget) + out - 1."""
    budget, cached = sc["budget"], bool(sc.get("prefix_caching"))
    earliest: dict[int, tuple[int, int, int]] = {}  # request -> (earliest submission, prefill steps, end)
    for chain in chains:
        end = None
        for i, r in chain:
            start = r.get("arrive", 0) if end is None else max(end + r.get("think", 0), r.get("arrive", 0))
            steps = 1 if cached else -(-r["prompt"] // budget)
            end = start + steps + r["out"] - 1
            earliest[i] = (start, steps, end)
    return earliest


def _past_horizon(sc: dict[str, Any], chains: list, h: float) -> ScenarioError | None:
    """The error of a scenario some of whose requests cannot end by the horizon ``h`` whatever the others do
    (their earliest ends, :func:`_earliest`, past ``h``), or None: :func:`_unfinished`'s error of a run
    that left exactly those requests unfinished, told without the run."""
    earliest = _earliest(sc, chains)
    past = sorted(i for i, (_, _, end) in earliest.items() if end > h)
    return _unfinished(sc, chains, past, h, earliest) if past else None


def _unfinished(sc: dict[str, Any], chains: list, missing: list[int], h: float,
                earliest: dict[int, tuple[int, int, int]] | None = None) -> ScenarioError:
    """The error of a run that ended at the scenario program's horizon ``h`` with the requests ``missing``
    unfinished, located in the scenario's JSON at the first of them; when that request cannot end by ``h``
    whatever the others do (its earliest end, :func:`_earliest`, past ``h``), at the value that puts its end
    past ``h`` (the largest of its three terms). ``earliest``: :func:`_earliest`'s, when computed already."""
    from serq_ir.rules import show_number as _show

    def show_number(x: float) -> str:  # a number as a message shows it; a JSON integer past a double's range too
        return _show(x) if x < 2**1024 else "past 1e+308"

    shown = ", ".join(map(str, missing[:10])) + (f" and {len(missing) - 10} more" if len(missing) > 10 else "")
    said = f"request(s) {shown} did not finish by step {show_number(h)}, the scenario program's horizon"
    budget, cached = sc["budget"], bool(sc.get("prefix_caching"))
    if earliest is None:
        earliest = _earliest(sc, chains)
    i = missing[0]
    r = sc["requests"][i]
    start, steps, end = earliest[i]
    if end <= h:
        return ScenarioError(f"{said} (a request stuck, or a scenario longer than that)", ("requests", i))
    own = start == r.get("arrive", 0)  # submitted at its own arrival, not after its session's turns
    at = max((start, ("requests", i, "arrive") if own and "arrive" in r else ("requests", i)),
             (steps, ("requests", i, "prompt")), (r["out"], ("requests", i, "out")), key=lambda t: t[0])[1]
    after = "" if own else ", after its session's turns before it"
    prefill = ("a step" if cached else
               f"in {show_number(steps)} step(s) of at most {show_number(budget)} tokens")
    return ScenarioError(
        f"{said}: requests[{i}] ends at step {show_number(end)} at the earliest (submitted at step "
        f"{show_number(start)} at the earliest{after}, its "
        f"{show_number(r['prompt'])} prompt tokens {prefill}, then its {show_number(r['out'])} output tokens one a "
        "step)", at)


def compare(answer: dict[str, Any], expected: dict[str, Any]) -> list[str]:
    """The differences between an answer (:func:`run_scenario`'s) and the oracle's (its ``.out.json``), on
    the fields the oracle gives: ``first``, ``done``, ``preempted``, ``cached`` (objects by request index)
    and ``preemptions``. An argument that is no dict is a TypeError, a field of the wrong shape a
    ValueError, each naming it (``compare(None, …)`` was "'NoneType' object is not subscriptable", an oracle
    without ``preemptions`` a KeyError, and ``preemptions`` was compared whether the oracle gave it or
    not)."""
    from collections.abc import Mapping

    for what, d in (("answer", answer), ("expected", expected)):
        if not isinstance(d, Mapping):
            raise TypeError(f"{what} must be a dict (run_scenario's answer, or the oracle's .out.json), not "
                            f"{type(d).__name__}")
    diffs = []
    for field in ("first", "done", "preempted", "cached"):
        if field in expected:
            for what, d in (("answer", answer), ("expected", expected)):
                if not isinstance(d.get(field), Mapping):
                    raise ValueError(f"{what}[{field!r}] must be an object of request indices, not "
                                     f"{type(d.get(field)).__name__}")
            for k, v in expected[field].items():
                if answer[field].get(k) != v:
                    diffs.append(f"{field}[{k}]: serQ {answer[field].get(k)}, vLLM {v}")
    if "preemptions" in expected:
        if "preemptions" not in answer:
            raise ValueError("answer['preemptions'] is missing (run_scenario's answer gives it)")
        if answer["preemptions"] != expected["preemptions"]:
            diffs.append(f"preemptions: serQ {answer['preemptions']}, vLLM {expected['preemptions']}")
    return diffs
