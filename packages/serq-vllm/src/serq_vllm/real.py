"""The bridge to the real vLLM v1 scheduler: run an oracle scenario through it and answer in the
oracle's conventions.

vLLM is never a dependency of serQ. This module imports it lazily, inside :func:`run_real`, from
whatever interpreter runs it; see ``docs/vllm-oracle.md`` for a CPU-only install. It imports nothing
else from the project, so it also runs on its own::

    /path/to/vllm-venv/bin/python -m serq_vllm.real SCENARIO.json
    /path/to/vllm-venv/bin/python path/to/serq_vllm/real.py SCENARIO.json

What runs is vLLM's own ``Scheduler`` (``vllm.v1.core.sched.scheduler``) with its ``KVCacheManager``
and ``BlockPool``, unpatched, configured from the scenario:

====================  =====================================================================
scenario              vLLM setting
====================  =====================================================================
``budget``            ``max_num_batched_tokens`` (chunked prefill on)
``max_seqs``          ``max_num_seqs``
``block_size``        ``block_size``
``num_blocks``        ``num_gpu_blocks`` (vLLM keeps one as its null block)
``chunk``             ``long_prefill_token_threshold`` (0 or absent: none)
``prefix_caching``    ``enable_prefix_caching`` (absent: false)
``serve``             a ``Scheduler`` subclass that reorders the running requests by that key
====================  =====================================================================

The model is a fake: no weights, no tokenizer (a tiny ``config.json`` in a temporary folder), and a
model runner that returns one sampled token for every scheduled request whose prefill is complete
after the step, nothing for a request still prefilling.

The step clock: every ``schedule()`` call is one step; step k runs from time k to time k + 1. A request
with ``arrive: a`` is added just before call a. ``first`` is the end of the step whose chunk completed
the prefill (the first time), ``done`` the end of the step that sampled the last token, ``steps`` the
last ``done`` + 1. Turn k + 1 of a session is submitted ``think`` after turn k's ``done`` (and not
before its own ``arrive``); its token ids are turn k's prompt, then turn k's output, then fresh tokens
up to its ``prompt`` length. All other token ids are fresh, so requests share nothing else.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from typing import Any

__all__ = ["VllmNotInstalled", "ScenarioError", "ScenarioStuck", "check_scenario", "run_real", "vllm_version", "SERVE_ORDERS"]

# The serving orders the scheduler subclass knows (the `serve by` keys of the oracle scenarios).
SERVE_ORDERS = ("admission", "-admission", "decoding", "-decoding", "decoding ? X : Y")

# A step cap: a scenario that has not finished by then is stuck.
MAX_STEPS = 100_000


class VllmNotInstalled(RuntimeError):
    """vLLM cannot be imported in this interpreter."""

    serq_user_error = True


class ScenarioStuck(RuntimeError):
    """The real scheduler did not finish a scenario's requests: some can never be scheduled, or the run passed
    its limit of steps. A fact about the scenario (a user's input), told as a message, not a traceback."""

    serq_user_error = True


class ScenarioError(ValueError):
    """A scenario asks for something neither side models; the message names the JSON path. ``json_path``:
    that path as keys and indices (``("requests", 3, "prompt")``), ``json_key``: the fault is the key itself
    (an unknown one), for a reader of the file to locate it (``serq.jsonin.read_json``)."""

    serq_user_error = True

    def __init__(self, message: str, at: tuple = (), key: bool = False):
        super().__init__(message)
        self.json_path, self.json_key = at, key


# The fields a scenario may have, and those of a request: everything both sides model. Anything else
# (a `prefix` group shared across sessions, say) is refused rather than silently dropped.
SCENARIO_KEYS = ("budget", "max_seqs", "block_size", "num_blocks", "chunk", "prefix_caching", "serve", "policy",
                 "requests")
REQUEST_KEYS = ("prompt", "out", "arrive", "session", "turn", "think", "priority")
#: the scheduling policies a scenario's ``policy`` names, vLLM's ``SchedulerConfig.policy``
POLICIES = ("fcfs", "priority")


def _int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


#: every count of a scenario is below this: serQ's numbers are doubles, which hold every whole number
#: only up to 2**53 (a budget of 2**53 + 1 was run as 2**53, a prompt as the one before it, silently)
EXACT = 2**53

#: the settings and the request fields that are counts or times (``turn`` and ``session`` are keys, compared as
#: they are written); an ``arrive`` or a ``think`` that large is far past the step clock's horizon, but the
#: horizon's error read it as a double, and printed 2**53 + 1 as 2**53, so it is refused here, named
_COUNTS = ("budget", "max_seqs", "block_size", "num_blocks", "chunk")
_REQUEST_COUNTS = ("prompt", "out", "arrive", "think")


def _not_ascii(text: Any) -> str:
    """What a refusal of a scenario's key or serve order adds when the text is not ASCII (every key and order
    the bridge knows is): its first such character, by code point and Unicode name. A key pasted with a
    look-alike letter (Cyrillic ``е`` in ``budgеt``) was refused beside the list of keys that holds the one it
    looks like, and no word of why they differ. Nothing otherwise."""
    if not isinstance(text, str) or text.isascii():
        return ""
    import unicodedata

    ch = next(c for c in text if not c.isascii())
    shown = ch if ch.isprintable() and not unicodedata.combining(ch) else ascii(ch)[1:-1]
    name = unicodedata.name(ch, "")
    return f"; it is not ASCII: its `{shown}` is U+{ord(ch):04X}{' ' + name if name else ''}"


def _steps_refused(v: Any) -> str:
    """Why a request's ``arrive`` or ``think`` that is no non-negative integer is refused, as its message ends
    (each was told 'the two sides round a fraction differently', a -1, a NaN, a "3" and a 2.0 too)."""
    if isinstance(v, float) and math.isfinite(v) and v >= 0:
        if v == int(v):
            return f"{v!r}: a whole number is written without a point ({int(v)})"
        return f"{v!r}: the two sides round a fraction differently"
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, str):
        return f"the string {_quoted(v)}"
    if isinstance(v, (int, float)):
        return _quoted(v) if _int(v) or v == v else "NaN"
    return f"{'an object' if isinstance(v, dict) else 'a list' if isinstance(v, list) else type(v).__name__}"


def _quoted(v: Any, width: int = 60) -> str:
    """A value (or a key) of a scenario as a message quotes it: a string as ``repr`` gives it (a line break or
    an escape sequence in it escaped: an unknown key holding one split the message's line or drove the
    terminal), an integer in digits, either cut to about ``width`` characters around an ellipsis (a
    scenario's serve order of 100 000 characters, or an integer of 300 digits, was quoted whole)."""
    text = repr(v)
    if len(text) <= width:
        return text
    half = width // 2
    more = f" ({len(str(abs(v)))} digits)" if _int(v) else f" ({len(v)} characters)" if isinstance(v, str) else ""
    return f"{text[:half]}...{text[-half // 2:]}{more}"


def _exact(v: Any, where: str, at: tuple) -> None:
    if _int(v) and not -EXACT < v < EXACT:
        raise ScenarioError(f"{where}: {_quoted(v)} is not below 2**53 in size, where serQ's numbers (doubles) do not "
                            "tell one whole number from the next: the two sides would read it differently", at)


def check_scenario(sc: Any) -> None:
    """Refuse, with the JSON path, a scenario that asks for what the two sides (the serQ program of
    ``serq vllm scenario`` and this bridge) do not both model the same way: an unknown key, a setting
    that is not a positive integer, ``max_seqs`` above ``budget`` (vLLM refuses that configuration), an
    arrival or a think time that is not a whole number of steps (the two sides would round it
    differently), a request whose sequence needs more KV blocks than the engine has (vLLM refuses it,
    its scheduler alone would wait for ever, serQ rejects it), a later turn whose prompt is shorter
    than its history (the previous prompt and output), a later turn with an arrival of its own, a
    serving order the bridge lacks, a setting or a token count not below 2**53 in size (serQ's numbers are doubles,
    which hold every whole number only below it; the KV cache's tokens too), a ``policy`` other than ``fcfs`` and
    ``priority``, a ``serve`` under the priority policy, a request's ``priority`` that is no integer, or one that
    is not 0 under the FCFS policy (vLLM refuses it). Raises ScenarioError, whose ``json_path`` says where."""
    if not isinstance(sc, dict) or not isinstance(sc.get("requests"), list) or not sc["requests"]:
        at = ("requests",) if isinstance(sc, dict) and "requests" in sc else ()
        raise ScenarioError("not a scenario: expected an object with a non-empty 'requests' list", at)
    for k in sc:
        if k not in SCENARIO_KEYS:
            raise ScenarioError(f"{_quoted(k)}: unknown scenario key, not modelled (a scenario has "
                                f"{', '.join(SCENARIO_KEYS)}){_not_ascii(k)}", (k,), key=True)
    for key in ("budget", "max_seqs", "block_size", "num_blocks"):
        if key not in sc:
            raise ScenarioError(f"'{key}' is missing: a scenario gives 'budget', 'max_seqs', 'block_size' and "
                                "'num_blocks', each a positive integer", ())
        if not _int(sc.get(key)) or sc[key] <= 0:
            raise ScenarioError(f"'{key}' must be a positive integer", (key,) if key in sc else ())
    for key in _COUNTS:
        _exact(sc.get(key), f"'{key}'", (key,))
    if sc["max_seqs"] > sc["budget"]:
        raise ScenarioError(f"'max_seqs' ({sc['max_seqs']}) is above 'budget' ({sc['budget']}): vLLM refuses "
                            "max_num_seqs > max_num_batched_tokens", ("max_seqs",))
    kv = (sc["num_blocks"] - 1) * sc["block_size"]
    if kv >= EXACT:
        raise ScenarioError(f"'num_blocks': {sc['num_blocks'] - 1} blocks (less vLLM's null block) of "
                            f"{sc['block_size']} tokens are {kv} tokens, not below 2**53, where serQ's numbers "
                            "(doubles) do not tell one whole number from the next", ("num_blocks",))
    if sc.get("chunk") is not None and (not _int(sc["chunk"]) or sc["chunk"] < 0):
        raise ScenarioError("'chunk' must be a non-negative integer (0: no long-prefill threshold)", ("chunk",))
    if "prefix_caching" in sc and not isinstance(sc["prefix_caching"], bool):
        raise ScenarioError("'prefix_caching' must be true or false", ("prefix_caching",))
    if "serve" in sc:
        if not isinstance(sc["serve"], str):
            raise ScenarioError("'serve' must be a string (a serve key)", ("serve",))
        try:
            _serve_key(sc["serve"])
        except ValueError as e:
            raise ScenarioError(f"'serve': {e}", ("serve",)) from None
    if "policy" in sc:
        if not isinstance(sc["policy"], str) or sc["policy"] not in POLICIES:
            raise ScenarioError(f"'policy': must be \"fcfs\" or \"priority\" (vLLM's scheduling_policy), not "
                                f"{_shown_value(sc['policy'])}{_not_ascii(sc['policy'])}", ("policy",))
        if sc["policy"] == "priority" and "serve" in sc:
            raise ScenarioError("'serve' with 'policy': \"priority\" is not modelled: the bridge's serving orders are "
                                "a scheduler class of their own built on the priority policy's victim path, and "
                                "vLLM's priority policy serves in admission order; give one or the other",
                                ("serve",))
    priority = policy(sc) == "priority"
    sessions: dict[Any, list[int]] = {}
    reqs_given = sc["requests"]
    for i, r in enumerate(sc["requests"]):
        where = f"requests[{i}]"
        if not isinstance(r, dict):
            raise ScenarioError(f"{where}: a request is an object", ("requests", i))
        for k in r:
            if k not in REQUEST_KEYS:
                shown = k if k.isidentifier() and len(k) <= 60 else _quoted(k)
                raise ScenarioError(f"{where}.{shown}: unknown request key, not modelled (a request has "
                                    f"{', '.join(REQUEST_KEYS)}){_not_ascii(k)}", ("requests", i, k), key=True)
        for k in ("prompt", "out"):
            if not (_int(r.get(k)) and r[k] > 0):
                raise ScenarioError(f"{where}: 'prompt' and 'out' must be positive integers",
                                    ("requests", i, k) if k in r else ("requests", i))
        for k in _REQUEST_COUNTS:
            _exact(r.get(k), f"{where}.{k}", ("requests", i, k))
        if "priority" in r:
            p = r["priority"]
            if not _int(p):
                raise ScenarioError(f"{where}.priority: must be an integer (vLLM's request priority, the lower "
                                    f"the sooner), not {_shown_value(p)}", ("requests", i, "priority"))
            _exact(p, f"{where}.priority", ("requests", i, "priority"))
            if p != 0 and not priority:
                raise ScenarioError(f"{where}.priority: {p} under the 'fcfs' policy (the scenario's "
                                    f"{'policy' if 'policy' in sc else 'default'}): vLLM refuses a request "
                                    "whose priority is not 0 unless priority scheduling is enabled (\"Got "
                                    f"priority {p} but Priority scheduling is not enabled.\"); give the "
                                    "scenario \"policy\": \"priority\"", ("requests", i, "priority"))
        # its KV at the last step: prompt + out - 1 tokens (the last sampled token is never fed back)
        need = -(-(r["prompt"] + r["out"] - 1) // sc["block_size"])
        if need > sc["num_blocks"] - 1:
            raise ScenarioError(
                f"{where}: its {r['prompt']} prompt and {r['out']} output tokens need {need} KV blocks of "
                f"{sc['block_size']}, more than the engine's {sc['num_blocks'] - 1} ('num_blocks' less vLLM's "
                "null block): vLLM refuses such a request before its scheduler sees it (max_model_len, "
                "checked against the KV cache at start-up), its scheduler alone waits for it for ever and "
                "holds up the requests behind it, and serQ's pool rejects it; no answer to compare", ("requests", i))
        for k in ("arrive", "think"):
            if k in r and (not _int(r[k]) or r[k] < 0):
                raise ScenarioError(f"{where}.{k}: must be a non-negative integer (a number of steps), "
                                    f"not {_steps_refused(r[k])}", ("requests", i, k))
        if "turn" in r and not _int(r["turn"]):
            raise ScenarioError(f"{where}.turn: must be an integer", ("requests", i, "turn"))
        if "session" in r:
            if not (_int(r["session"]) or isinstance(r["session"], str)):
                raise ScenarioError(f"{where}.session: must be an integer or a string", ("requests", i, "session"))
            # 1 and "1" are two sessions to JSON and to both sides, and one to a reader: refused, written
            # one way (a string and an integer of other texts are two sessions, plainly)
            twin = str(r["session"]) if _int(r["session"]) else None
            if twin is None and r["session"].strip().lstrip("+-").isdigit():
                try:
                    twin = int(r["session"])
                except ValueError:
                    twin = None
            if twin is not None and twin in sessions:
                other = sessions[twin][0]
                raise ScenarioError(f"{where}.session: {_quoted(r['session'])} and requests[{other}].session "
                                    f"{_quoted(reqs_given[other]['session'])} are two different sessions (one an integer, the "
                                    "other a string); write a session's id one way in every request",
                                    ("requests", i, "session"))
            sessions.setdefault(r["session"], []).append(i)
        elif "turn" in r or "think" in r:
            raise ScenarioError(f"{where}: 'turn' and 'think' belong to a request of a session (no 'session')",
                                ("requests", i, "turn" if "turn" in r else "think"), key=True)
    reqs = sc["requests"]
    for idxs in sessions.values():
        first: dict[int, int] = {}  # a turn number -> the first request of the session that gives it
        for i in idxs:  # in request order: the error names the request that repeats a turn
            t = reqs[i].get("turn", 0)
            if t in first:
                given = f"turn {t}" if "turn" in reqs[i] else f"turn {t} (no 'turn' is turn 0)"
                raise ScenarioError(f"requests[{i}].turn: session {_quoted(reqs[i]['session'])} has {given} twice (first "
                                    f"at requests[{first[t]}])",
                                    ("requests", i, "turn") if "turn" in reqs[i] else ("requests", i))
            first[t] = i
        idxs = sorted(idxs, key=lambda i: reqs[i].get("turn", 0))
        if "think" in reqs[idxs[0]]:
            raise ScenarioError(f"requests[{idxs[0]}].think: the first turn of a session has no think "
                                "(it arrives at 'arrive')", ("requests", idxs[0], "think"), key=True)
        for a, b in zip(idxs, idxs[1:]):
            if reqs[b].get("arrive"):
                raise ScenarioError(f"requests[{b}].arrive: a later turn with its own 'arrive' is not "
                                    "modelled (it is sent 'think' after the previous turn's last token)",
                                    ("requests", b, "arrive"), key=True)
            history = reqs[a]["prompt"] + reqs[a]["out"]
            if reqs[b]["prompt"] < history:
                raise ScenarioError(f"requests[{b}].prompt: {reqs[b]['prompt']} is shorter than its history, "
                                    f"the previous turn's prompt and output (requests[{a}]: {history}); a "
                                    "turn's prompt extends the whole previous sequence", ("requests", b, "prompt"))


def policy(sc: dict[str, Any]) -> str:
    """The scheduling policy of a (checked) scenario: its ``policy``, ``fcfs`` (vLLM's default) when it
    names none."""
    return sc.get("policy", "fcfs")


def _shown_value(v: Any) -> str:
    """A value of a scenario's field as a refusal quotes it: ``true``/``null`` as JSON writes them, a string
    or a number quoted (:func:`_quoted`), an object or a list by its kind."""
    if isinstance(v, bool) or v is None:
        return json.dumps(v)
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, float) and v != v:
        return "NaN"
    return _quoted(v)


def vllm_version() -> str | None:
    """The version of the vLLM this interpreter can import, or None."""
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover
        return None
    try:
        return version("vllm")
    except PackageNotFoundError:
        return None


def not_installed() -> VllmNotInstalled:
    """The error of an interpreter, this one, that has no vLLM."""
    return VllmNotInstalled(f"vLLM is not installed in this interpreter ({sys.executable}); see "
                            "docs/vllm-oracle.md for a CPU-only install")


def _import_vllm() -> dict[str, Any]:
    """vLLM's scheduler API, imported now, or VllmNotInstalled."""
    if vllm_version() is None:
        raise not_installed()
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import torch
        from vllm.config import CacheConfig, DeviceConfig, ModelConfig, SchedulerConfig, VllmConfig
        from vllm.sampling_params import SamplingParams
        from vllm.v1.core.kv_cache_utils import (
            get_request_block_hasher,
            init_none_hash,
            resolve_kv_cache_block_sizes,
        )
        from vllm.v1.core.sched.request_queue import SchedulingPolicy
        from vllm.v1.core.sched.scheduler import Scheduler
        from vllm.v1.kv_cache_interface import FullAttentionSpec, KVCacheConfig, KVCacheGroupSpec
        from vllm.v1.outputs import ModelRunnerOutput
        from vllm.v1.request import Request
        from vllm.v1.structured_output import StructuredOutputManager
    except Exception as e:  # noqa: BLE001 - told, with its type when it is not an ImportError
        # (an import that fails otherwise, torch's OSError for a library it cannot load or vLLM's own
        # RuntimeError for a platform it does not know, was a traceback)
        why = str(e) if isinstance(e, ImportError) else f"{type(e).__name__}: {e}"
        raise VllmNotInstalled(
            f"vLLM {vllm_version()} is installed but its scheduler does not import ({why}); "
            "see docs/vllm-oracle.md for the packages it needs"
        ) from e
    try:
        from vllm.utils.hashing import get_hash_fn_by_name
    except ImportError:
        try:  # older layouts
            from vllm.utils import get_hash_fn_by_name  # type: ignore[no-redef]
        except ImportError as e:
            raise VllmNotInstalled(f"vLLM {vllm_version()}: no get_hash_fn_by_name ({e})") from e
    return dict(
        torch=torch,
        CacheConfig=CacheConfig,
        DeviceConfig=DeviceConfig,
        ModelConfig=ModelConfig,
        SchedulerConfig=SchedulerConfig,
        VllmConfig=VllmConfig,
        SamplingParams=SamplingParams,
        get_request_block_hasher=get_request_block_hasher,
        init_none_hash=init_none_hash,
        resolve_kv_cache_block_sizes=resolve_kv_cache_block_sizes,
        Scheduler=Scheduler,
        SchedulingPolicy=SchedulingPolicy,
        FullAttentionSpec=FullAttentionSpec,
        KVCacheConfig=KVCacheConfig,
        KVCacheGroupSpec=KVCacheGroupSpec,
        ModelRunnerOutput=ModelRunnerOutput,
        Request=Request,
        StructuredOutputManager=StructuredOutputManager,
        get_hash_fn_by_name=get_hash_fn_by_name,
    )


_NUMBER = r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)"


def serve_form(serve: str) -> str:
    """A serving order in the one spelling both sides read: ``admission``, ``-admission``, ``decoding``,
    ``-decoding`` or ``decoding ? X : Y`` (X and Y as written), whatever blanks the scenario put between
    its words; a ValueError for an order the bridge lacks. ``serq vllm scenario`` gives this spelling to
    the scenario program (``--def serve_key``): a blank the bridge skips but serQ's language does not read
    (a no-break space, a vertical tab, U+001C, which Python's ``str.split`` takes as blanks) was passed
    on as written and refused by the program's compile at ``defs['serve_key']:1:9``, not at the
    scenario's ``serve``."""
    s = "".join(str(serve).split())
    if s in ("admission", "-admission", "decoding", "-decoding"):
        return s
    m = re.fullmatch(rf"decoding\?({_NUMBER}):({_NUMBER})", s, flags=re.ASCII)
    if m:
        return f"decoding ? {m.group(1)} : {m.group(2)}"
    raise ValueError(
        f"serve order {_quoted(serve)} is not supported by the bridge (known: {', '.join(SERVE_ORDERS)})"
        f"{_not_ascii(serve)}"
    )


def _serve_key(serve: str):
    """The sort key of a serving order, a function of (admission stamp, decoding).

    Known (:func:`serve_form`): ``admission``, ``-admission``, ``decoding``, ``-decoding`` and
    ``decoding ? X : Y`` with numbers X and Y (``decoding ? 1 : 0``: prefills first; ``decoding ? 0 :
    1``: decodes first)."""
    s = serve_form(serve)
    if s == "admission":
        return lambda adm, decoding: adm
    if s == "-admission":
        return lambda adm, decoding: -adm
    if s in ("decoding", "-decoding"):
        sign = -1 if s.startswith("-") else 1
        return lambda adm, decoding: sign * (1 if decoding else 0)
    yes, no = (float(x) for x in s.removeprefix("decoding ? ").split(" : "))
    return lambda adm, decoding: yes if decoding else no


def _decoding(request: Any) -> bool:
    """Whether a running request has its prefill (or its recompute after a preemption) complete:
    vLLM's ``not is_prefill_chunk``, as set after the request's last scheduled chunk."""
    flag = getattr(request, "is_prefill_chunk", None)
    if flag is not None:
        return not flag
    return request.num_output_tokens > 0 and request.num_computed_tokens >= request.num_tokens - 1


def _serve_scheduler(base: type, priority_policy: Any, serve: str) -> type:
    """A subclass of vLLM's ``Scheduler`` that hands the token budget to its running requests in the
    order of a serve key, and leaves everything else as vLLM does it.

    vLLM's ``schedule()`` serves ``self.running`` in list order (its own list is in admission order:
    a request is appended when it is admitted, or re-admitted after a preemption). Before each call
    this class sorts the list by (key, admission), admission breaking ties. What vLLM's own order
    also decides, and this class keeps as vLLM has it:

    * the victim of a failed block allocation is the last admitted running request (vLLM's
      ``self.running[-1]``). The list being reordered, the class selects that victim through vLLM's
      own victim-anywhere path (the one its priority policy uses: ``max`` over the running requests
      by ``(priority, arrival_time)``, with ``priority`` set to the admission stamp), which also
      gives back the budget of a victim already served in this step. The waiting queue stays the
      FCFS queue vLLM built at construction, so nothing else of the priority policy applies.
    * a request that is its own victim ends the pass over the running requests (in vLLM's order it
      is the last one); the requests after it in the serve order are not served in that step.
    """
    key = _serve_key(serve)

    class SerqScheduler(base):  # type: ignore[misc, valid-type]
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.policy = priority_policy
            self._serq_admitted: dict[str, int] = {}
            self._serq_counter = 0
            self._serq_allocating: Any = None
            self._serq_held: list[Any] = []
            manager = self.kv_cache_manager
            allocate = manager.allocate_slots

            def allocate_slots(request: Any, *a: Any, **k: Any) -> Any:
                # Observe which request is allocating (to recognise a request that is its own victim).
                self._serq_allocating = request
                return allocate(request, *a, **k)

            manager.allocate_slots = allocate_slots

        def _serq_stamp(self) -> None:
            running = {r.request_id for r in self.running}
            for rid in list(self._serq_admitted):
                if rid not in running:
                    del self._serq_admitted[rid]
            for r in self.running:
                if r.request_id not in self._serq_admitted:
                    self._serq_admitted[r.request_id] = self._serq_counter
                    self._serq_counter += 1
                r.priority = self._serq_admitted[r.request_id]

        def _preempt_request(self, request: Any, *args: Any, **kwargs: Any) -> None:
            if request is self._serq_allocating and self._serq_position is not None:
                # Its own victim: vLLM has removed it from the running list; end the pass by
                # holding back the requests after it until schedule() returns.
                pos = self._serq_position(request)
                self._serq_held = self.running[pos:]
                del self.running[pos:]
            super()._preempt_request(request, *args, **kwargs)

        def schedule(self, *args: Any, **kwargs: Any) -> Any:
            self._serq_stamp()
            adm = self._serq_admitted
            self.running.sort(key=lambda r: (key(adm[r.request_id], _decoding(r)), adm[r.request_id]))
            order = [r.request_id for r in self.running]

            def position(request: Any) -> int:
                # Where the requests after `request` (in this step's serve order) start in the list.
                later = set(order[order.index(request.request_id) + 1 :])
                for k, r in enumerate(self.running):
                    if r.request_id in later:
                        return k
                return len(self.running)

            self._serq_position = position
            self._serq_held = []
            try:
                out = super().schedule(*args, **kwargs)
            finally:
                self._serq_position = None
                self._serq_allocating = None
                if self._serq_held:
                    self.running.extend(self._serq_held)
                    self._serq_held = []
            self._serq_stamp()
            return out

    SerqScheduler._serq_position = None
    SerqScheduler.__name__ = SerqScheduler.__qualname__ = "SerqScheduler"
    return SerqScheduler


def _write_model_config(d: str) -> str:
    """A tiny model config.json (no weights, no tokenizer) in folder d: enough for ModelConfig."""
    config = {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "num_hidden_layers": 1,
        "vocab_size": 32000,
        "max_position_embeddings": 1 << 20,
        "rms_norm_eps": 1e-6,
        "torch_dtype": "float32",
    }
    with open(os.path.join(d, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f)
    return d


def _chains(requests: list[dict[str, Any]]) -> dict[int, int]:
    """request index -> index of the previous turn of its session (only for later turns)."""
    sessions: dict[Any, list[int]] = {}
    for i, r in enumerate(requests):
        if "session" in r:
            sessions.setdefault(r["session"], []).append(i)
    prev: dict[int, int] = {}
    for idxs in sessions.values():
        idxs.sort(key=lambda i: (requests[i].get("turn", 0), i))
        for a, b in zip(idxs, idxs[1:]):
            prev[b] = a
    return prev


def config_out(sc: dict[str, Any]) -> dict[str, Any]:
    """The answer's ``config``: every setting of a (checked) scenario that changes the schedule, as it was
    run, whether the scenario wrote it or left it at its default: ``budget``, ``max_seqs``, ``chunk`` (0 for
    none), ``block_size``, ``num_blocks``, ``prefix_caching`` (true or false) and ``serve`` (the serving order
    in :func:`serve_form`'s spelling, ``admission`` when the scenario names none). Both sides write it, the
    bridge and ``serq vllm scenario``: the scenario's answer gave ``chunk: null`` for no threshold and left out
    ``prefix_caching`` and ``serve``, and the bridge left out ``serve`` and a ``prefix_caching`` that was off.
    (The oracle's answers written before this give ``prefix_caching`` only when it is on, and no ``serve``.)
    ``policy`` is given when it is ``priority``: an answer under vLLM's default policy, FCFS, is the object it
    always was."""
    out = {
        "budget": sc["budget"],
        "max_seqs": sc["max_seqs"],
        "chunk": sc.get("chunk") or 0,
        "block_size": sc["block_size"],
        "num_blocks": sc["num_blocks"],
        "prefix_caching": bool(sc.get("prefix_caching")),
        "serve": serve_form(sc["serve"]) if "serve" in sc else "admission",
    }
    if policy(sc) == "priority":
        out["policy"] = "priority"
    return out


def run_real(scenario: dict[str, Any]) -> dict[str, Any]:
    """Run a scenario through the installed vLLM's real scheduler; answer in the oracle's conventions:
    ``first``, ``done``, ``preempted``, ``cached``, ``preemptions``, ``steps``, ``config``, ``vllm``.

    Raises ScenarioError for a scenario it does not model, VllmNotInstalled if vLLM cannot be
    imported here."""
    check_scenario(scenario)
    v = _import_vllm()
    import tempfile  # here: serq vllm scenario imports this module for check_scenario alone

    with tempfile.TemporaryDirectory(prefix="serq-vllm-model-") as d:
        return _run(v, scenario, _write_model_config(d))


def _run(v: dict[str, Any], sc: dict[str, Any], model_dir: str) -> dict[str, Any]:
    requests: list[dict[str, Any]] = list(sc["requests"])
    n = len(requests)
    budget = int(sc["budget"])
    block_size = int(sc["block_size"])
    num_blocks = int(sc["num_blocks"])
    chunk = int(sc.get("chunk") or 0)
    caching = bool(sc.get("prefix_caching"))
    serve = sc.get("serve")
    max_len = max(int(r["prompt"]) + int(r["out"]) for r in requests)
    max_model_len = max(4096, 1 << (max_len + budget).bit_length())

    model_config = v["ModelConfig"](
        model=model_dir,
        skip_tokenizer_init=True,
        max_model_len=max_model_len,
        dtype="float32",
    )
    cache_config = v["CacheConfig"](block_size=block_size, enable_prefix_caching=caching)
    scheduler_config = v["SchedulerConfig"](
        max_num_batched_tokens=budget,
        max_num_seqs=int(sc["max_seqs"]),
        long_prefill_token_threshold=chunk,
        max_model_len=max_model_len,
        is_encoder_decoder=False,
        enable_chunked_prefill=True,
        async_scheduling=False,
        # vLLM's own scheduling policy (the FCFS default is not passed: the configuration it always was)
        **({"policy": "priority"} if policy(sc) == "priority" else {}),
    )
    vllm_config = v["VllmConfig"](
        model_config=model_config,
        cache_config=cache_config,
        scheduler_config=scheduler_config,
        device_config=v["DeviceConfig"](device="cpu"),
    )
    vllm_config.cache_config.num_gpu_blocks = num_blocks
    kv_cache_config = v["KVCacheConfig"](
        num_blocks=num_blocks,
        kv_cache_tensors=[],
        kv_cache_groups=[
            v["KVCacheGroupSpec"](
                ["model.layers.0.self_attn.attn"],
                v["FullAttentionSpec"](
                    block_size=block_size, num_kv_heads=1, head_size=64, dtype=v["torch"].float32
                ),
            )
        ],
    )
    sched_block_size, hash_block_size = v["resolve_kv_cache_block_sizes"](kv_cache_config, vllm_config)
    base = v["Scheduler"]
    cls = base if serve is None else _serve_scheduler(base, v["SchedulingPolicy"].PRIORITY, serve)
    scheduler = cls(
        vllm_config=vllm_config,
        kv_cache_config=kv_cache_config,
        structured_output_manager=v["StructuredOutputManager"](vllm_config),
        block_size=sched_block_size,
        hash_block_size=hash_block_size,
        log_stats=False,
    )
    block_hasher = None
    if caching:
        hash_fn = v["get_hash_fn_by_name"](vllm_config.cache_config.prefix_caching_hash_algo)
        v["init_none_hash"](hash_fn)
        block_hasher = v["get_request_block_hasher"](
            hash_block_size, hash_fn, getattr(vllm_config, "num_hash_lookahead_tokens", 0)
        )

    prev = _chains(requests)
    fresh = iter(range(1000, 1 << 62))  # fresh token ids: no two requests share any unless chained
    tokens: dict[int, list[int]] = {}  # request index -> prompt token ids
    outputs: dict[int, list[int]] = {i: [] for i in range(n)}
    submit_at: dict[int, int] = {}  # request index -> the step before which it is added
    for i, r in enumerate(requests):
        if i not in prev:
            submit_at[i] = int(math.ceil(r.get("arrive", 0) or 0))
    submitted: set[int] = set()
    reqs: dict[int, Any] = {}

    first: dict[int, int] = {}
    done: dict[int, int] = {}
    cached: dict[int, int] = {}

    def submit(i: int, step: int) -> None:
        r = requests[i]
        prompt = int(r["prompt"])
        ids: list[int] = []
        if i in prev:
            j = prev[i]
            ids = (tokens[j] + outputs[j])[:prompt]
        ids = ids + [next(fresh) for _ in range(prompt - len(ids))]
        tokens[i] = ids
        params = v["SamplingParams"](max_tokens=int(r["out"]), ignore_eos=True, detokenize=False)
        req = v["Request"](
            request_id=str(i),
            prompt_token_ids=list(ids),
            sampling_params=params,
            pooling_params=None,
            arrival_time=float(step),
            block_hasher=block_hasher,
            **({"priority": int(r.get("priority", 0))} if policy(sc) == "priority" else {}),
        )
        reqs[i] = req
        submitted.add(i)
        scheduler.add_request(req)

    step = 0
    while len(done) < n:
        if step >= MAX_STEPS:
            missing = sorted(set(range(n)) - set(done))
            raise ScenarioStuck(f"requests {missing} did not finish within {MAX_STEPS} steps of the real scheduler "
                                "(stuck?)")
        for i in sorted((i for i, a in submit_at.items() if a <= step and i not in submitted)):
            submit(i, step)
        out = scheduler.schedule()
        req_ids: list[str] = []
        sampled: list[list[int]] = []
        for rid, num in out.num_scheduled_tokens.items():
            i = int(rid)
            req = scheduler.requests[rid]
            if i not in cached:
                # num_computed_tokens has been advanced by this step's chunk already
                cached[i] = req.num_computed_tokens - num
            req_ids.append(rid)
            if req.num_computed_tokens >= req.num_tokens:
                tok = next(fresh)
                sampled.append([tok])
                if i not in first:
                    first[i] = step + 1
            else:
                sampled.append([])
        runner_output = v["ModelRunnerOutput"](
            req_ids=req_ids,
            req_id_to_index={rid: k for k, rid in enumerate(req_ids)},
            sampled_token_ids=sampled,
        )
        scheduler.update_from_output(out, runner_output)
        if not req_ids and not out.preempted_req_ids and len(submitted) == len(submit_at):
            # nothing ran, nothing changed and nothing more is due: it would stay so for ever
            stuck = sorted(set(range(n)) - set(done))
            raise ScenarioStuck(
                f"requests {stuck} can never be scheduled (step {step}): a prompt needs more KV "
                "blocks than the engine has, or max_seqs is 0"
            )
        for rid, toks in zip(req_ids, sampled):
            i = int(rid)
            if toks and i not in done:
                outputs[i] = list(reqs[i].output_token_ids)
                if reqs[i].is_finished():
                    done[i] = step + 1
                    for j, p in prev.items():
                        if p == i:
                            r = requests[j]
                            at = done[i] + float(r.get("think", 0) or 0)
                            at = max(at, float(r.get("arrive", 0) or 0))
                            submit_at[j] = int(math.ceil(at))
        step += 1

    preempted = {i: int(reqs[i].num_preemptions) for i in range(n)}
    by_first = sorted(range(n), key=lambda i: (first[i], i))
    by_done = sorted(range(n), key=lambda i: (done[i], i))
    return {
        "first": {str(i): first[i] for i in by_first},
        "done": {str(i): done[i] for i in by_done},
        "preempted": {str(i): preempted[i] for i in range(n)},
        "cached": {str(i): cached[i] for i in by_first},
        "preemptions": sum(preempted.values()),
        "steps": max(done.values()) + 1,
        "config": config_out(sc),
        "vllm": vllm_version(),
    }


#: the keys of :func:`run_real`'s answer
ANSWER_KEYS = ("first", "done", "preempted", "cached", "preemptions", "steps", "config", "vllm")


class BridgeError(RuntimeError):
    """The bridge failed in another interpreter (``run_real_in``); the message is its error output."""

    serq_user_error = True


#: how long ``run_real_in`` (``serq vllm real --python``) waits for the bridge's answer by default, in
#: seconds: vLLM's import takes some 10-30 s on a CPU and a shipped scenario's steps a second or two
TIMEOUT = 600.0
#: how much of the bridge's error output is kept (its last line is what an error quotes)
STDERR_KEPT = 64 * 1024
#: how long the output of a bridge that has exited is still read, while something it started holds it open
_GRACE = 1.0


class _Drain:
    """A thread reading a pipe to its end: ``data`` holds its first ``limit`` bytes (``over`` is set, and
    the reading stops, once more come), or with ``tail`` its last ``limit`` bytes (read on to the end)."""

    def __init__(self, pipe: Any, limit: int, tail: bool = False):
        import threading

        self._pipe, self._fd, self._limit, self._tail = pipe, pipe.fileno(), limit, tail
        self.data = bytearray()
        self.over = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        # the thread closes the pipe itself, once done with it: a descriptor closed while a read waits on it
        # may be given to the next file opened, and the read would take that file's bytes
        try:
            while True:
                chunk = os.read(self._fd, 1 << 16)
                if not chunk:
                    return
                self.data += chunk
                if len(self.data) > self._limit:
                    if not self._tail:
                        self.over = True
                        return
                    del self.data[: len(self.data) - self._limit]
        except OSError:  # pragma: no cover - a read error: what was read is what there is
            return
        finally:
            try:
                self._pipe.close()
            except OSError:  # pragma: no cover
                pass


def _feed(pipe: Any, data: bytes) -> None:
    """Write the question to the bridge's standard input and close it; a bridge that exits or is stopped
    without reading it all is no error here (its answer, or its absence, says what went wrong)."""
    try:
        pipe.write(data)
    except (OSError, ValueError):
        pass
    finally:
        try:
            pipe.close()
        except OSError:
            pass


def _stop(proc: Any) -> None:
    """Kill the bridge and whatever it started (its process group: it runs in a session of its own, so a
    shell script's ``sleep`` goes too, and Ctrl-C at the terminal reaches serq only)."""
    import signal

    if os.name == "posix":
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        proc.kill()
    except OSError:  # pragma: no cover - already gone
        pass


def _hold_signals(got: list[int]) -> Any:
    """Hold SIGINT, SIGTERM and SIGHUP (record them in ``got``) until the function returned is called, which gives
    the handlers back. Around the start of the bridge: a signal whose handler raises (Ctrl-C's
    ``KeyboardInterrupt``) between the child's start and ``Popen`` knowing its pid lost the pid, and the
    child ran on. Only in the main thread, where handlers are; elsewhere nothing is held."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {}
    # (the bridge runs where vLLM is installed, serQ perhaps not: the standard library only, as serq.signals.HANDLED)
    for sig in [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)]:
        try:
            previous[sig] = signal.signal(sig, lambda n, _frame: got.append(n))
        except (OSError, ValueError):  # pragma: no cover - a signal this platform lacks
            pass

    def restore() -> None:
        for sig, handler in previous.items():
            signal.signal(sig, handler)

    return restore


def _shown(text: str, width: int = 200) -> str:
    return text if len(text) <= width else text[:width] + "..."


def run_real_in(python: str, scenario: dict, *, timeout: float | None = TIMEOUT, named: str | None = None) -> dict:
    """``run_real`` in another interpreter, one that has vLLM: this file runs there on its own (it
    imports nothing else of serQ), reading the scenario from its standard input. ``named`` is how a
    message names the interpreter (``--python PYTHON`` by default; ``serq vllm real`` without ``--python``
    runs the bridge so in serQ's own, named as such).

    The interpreter has ``timeout`` seconds (:data:`TIMEOUT`; ``None`` or ``inf``: no limit) to answer
    with one JSON object of :data:`ANSWER_KEYS` on its standard output, of at most
    ``serq.files.MAX_JSON`` bytes; anything else (no answer in time, more output than that, output that is
    not the answer, an exit status other than 0) raises :class:`BridgeError`, one message naming
    ``python``. It runs in a session of its own, and it and whatever it started are killed at once when
    it is late or too talkative, and when this call is interrupted (``KeyboardInterrupt``, serq's
    SIGTERM): a program that never answered kept ``serq vllm real`` waiting for ever, and one that wrote
    without end filled the memory."""
    import signal
    import subprocess
    import threading
    import time

    from serq.errors import shown_path
    from serq.files import MAX_JSON

    if timeout is not None and not timeout > 0:
        raise ValueError(f"run_real_in: timeout must be a positive number of seconds, not {timeout!r}")
    # the interpreter's name as every message prints a file's (a --python of 5 000 characters was printed whole
    # in each message, a line break in it split the message's line)
    shown = shown_path(python)
    named = f"--python {shown}" if named is None else named
    question = json.dumps(scenario).encode("utf-8")
    # a name without a folder is the file of that name here when there is one (the option names a path), else a
    # command looked for on PATH (python3): the file ./venv-python given as venv-python was looked for on PATH
    # alone, and the error said "No such file or directory" of a file that was there
    program = str(python)
    bare = os.sep not in program and not (os.altsep and os.altsep in program)
    if bare and os.path.lexists(program):
        program = os.path.join(os.curdir, program)
    held: list[int] = []
    restore = _hold_signals(held)
    try:
        try:
            proc = subprocess.Popen([program, __file__, "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=os.name == "posix")
        finally:
            restore()
    except (OSError, ValueError) as e:
        if held:
            signal.raise_signal(held[0])
        why = getattr(e, "strerror", None) or e
        if bare and isinstance(e, FileNotFoundError) and program == python:
            why = "no such file here, nor a command of that name on PATH"
        raise BridgeError(f"error: {named}: {why}") from None
    deadline = None if timeout is None or timeout == math.inf else time.monotonic() + timeout
    out = err = None
    try:
        if held:  # a signal came while the bridge started: its handler runs now, when the bridge can be stopped
            signal.raise_signal(held[0])
        threading.Thread(target=_feed, args=(proc.stdin, question), daemon=True).start()
        out = _Drain(proc.stdout, MAX_JSON)
        err = _Drain(proc.stderr, STDERR_KEPT, tail=True)
        while proc.poll() is None and not out.over:
            if deadline is not None and time.monotonic() >= deadline:
                _stop(proc)
                raise BridgeError(f"error: {named}: no answer after {timeout:g} s; stopped it (give "
                                  "it longer with --timeout SECONDS, or inf)")
            try:
                proc.wait(0.05)
            except subprocess.TimeoutExpired:
                pass
        if not out.over:  # it exited: what it wrote is read to the end (or as long as a child holds it)
            end = time.monotonic() + _GRACE
            for d in (out, err):
                d.thread.join(max(0.0, end - time.monotonic()))
        _stop(proc)  # and anything it left behind
        for d in (out, err):
            d.thread.join(_GRACE)
        if out.over:
            raise BridgeError(f"error: {named}: wrote more than {MAX_JSON // 2**20} MiB without the "
                              "bridge's answer; stopped it")
        proc.wait()
    except BaseException:
        _stop(proc)
        proc.wait()
        for pipe, drain in ((proc.stdout, out), (proc.stderr, err)):
            if drain is None:  # (a drain closes its own)
                pipe.close()
        raise
    assert out is not None and err is not None
    if proc.returncode != 0:
        stderr = bytes(err.data).decode("utf-8", errors="replace")
        lines = [x for x in stderr.splitlines() if x.strip() and "vllm._C" not in x]
        if lines:
            tail = _shown(lines[-1].strip())
        elif proc.returncode < 0:
            tail = f"stopped by signal {-proc.returncode}"
        else:
            tail = f"exit status {proc.returncode}"
        raise BridgeError(tail if tail.startswith("error:") else f"error: {shown}: {tail}")
    answer = None
    try:
        text = bytes(out.data).decode("utf-8")
    except UnicodeDecodeError:
        text = bytes(out.data).decode("utf-8", errors="replace")
    else:
        try:
            answer = json.loads(text)
        except (ValueError, RecursionError):
            answer = None
    if not (isinstance(answer, dict) and all(k in answer for k in ANSWER_KEYS)):
        # not this file's answer (run_real's): the program run was no Python interpreter
        m = re.search(r"\S", text)
        first = None if m is None else text[m.start(): m.start() + 400].split("\n", 1)[0].strip()
        wrote = "It wrote nothing." if first is None else f"It wrote {first[:80]!r}."
        raise BridgeError(f"error: {named}: no answer of the bridge in its output (a JSON object of "
                          f"{', '.join(ANSWER_KEYS)}): is it a Python interpreter? {wrote}")
    return answer


#: the most bytes of a scenario file the bridge reads on its own (serq.files.MAX_JSON, serQ's bound on a JSON file)
MAX_SCENARIO = 256 * 2**20


class _Unreadable(Exception):
    """A scenario the bridge, run on its own, cannot read: the message says why (naming the file)."""


def _twice(pairs: list) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        seen: set = set()
        key = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise _Unreadable(f"the key {json.dumps(key)} is given twice in one object")
    return d


def _read_bounded(f, size: int | None) -> bytes:
    """What ``f`` holds, up to :data:`MAX_SCENARIO` bytes and one, in a buffer of what it holds (``read(n)``
    allocates ``n`` bytes first: a read of the bound took 256 MB for a scenario of a few kB): a regular file
    of ``size`` bytes at once with a byte more to see it grow, the rest (a file that grew, a pipe) in pieces
    of 1 MiB. (serq.files.read_bounded's rule: this module imports nothing of serQ.)"""
    data = f.read(size + 1) if size is not None else b""
    if size is not None and len(data) <= size:
        return data
    parts, total = [data], len(data)
    while total <= MAX_SCENARIO:
        piece = f.read(min(2**20, MAX_SCENARIO + 1 - total))
        if not piece:
            break
        parts.append(piece)
        total += len(piece)
    return b"".join(parts)


def read_scenario_file(path: str) -> Any:
    """A scenario file as the bridge run on its own reads it (``python real.py SCENARIO.json``, ``-`` for standard
    input), by the rules serQ reads one by: a regular file only, opened without waiting (a FIFO blocked the
    bridge for ever), at most :data:`MAX_SCENARIO` bytes, UTF-8 whatever the locale (a byte-order mark
    skipped), JSON with no key given twice. A file that breaks one is :class:`_Unreadable`, one line naming the
    file and, for a JSON mistake, its line and column (a folder, a missing file, an empty file or text that is
    not JSON was a traceback)."""
    import stat

    try:
        if path == "-":
            data = _read_bounded(sys.stdin.buffer, None)
        else:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
            with os.fdopen(fd, "rb") as f:
                st = os.fstat(f.fileno())
                mode = st.st_mode
                if not stat.S_ISREG(mode):
                    kind = "a folder" if stat.S_ISDIR(mode) else "a FIFO (a named pipe)" if stat.S_ISFIFO(mode) else \
                        "a device or a socket"
                    raise _Unreadable(f"{path}: cannot read: is {kind}, not a file")
                data = _read_bounded(f, st.st_size) if st.st_size <= MAX_SCENARIO else None
    except OSError as e:
        raise _Unreadable(f"{path}: cannot read: {e.strerror or e}") from None
    if data is None or len(data) > MAX_SCENARIO:
        raise _Unreadable(f"{path}: cannot read: more than {MAX_SCENARIO // 2**20} MiB, more than a scenario may have")
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise _Unreadable(f"{path}:{line}:{col}: error: not UTF-8 text (byte 0x{data[e.start]:02X})") from None
    if not text.strip():
        raise _Unreadable(f"{path}:1:1: error: the file is empty (a scenario is a JSON object)")
    try:
        return json.loads(text, object_pairs_hook=_twice)
    except json.JSONDecodeError as e:
        raise _Unreadable(f"{path}:{e.lineno}:{e.colno}: error: not JSON: {e.msg}") from None
    except _Unreadable as e:
        raise _Unreadable(f"{path}: error: {e}") from None
    except (RecursionError, ValueError) as e:  # nested too deeply; an integer of too many digits
        what = "JSON nested too deeply" if isinstance(e, RecursionError) else str(e)
        raise _Unreadable(f"{path}: error: not a scenario: {what}") from None


def _say(text: str) -> None:
    """``text`` and a line end on standard error, or nowhere when there is none (``sys.stderr`` None, or a
    descriptor that refuses the write), as ``click.echo(text, err=True)`` says it: ``print(…, file=sys.stderr)``
    writes to standard output when ``sys.stderr`` is None, the channel of the bridge's answer. Not click's
    echo: the bridge runs on its own in an interpreter that has vLLM and no more of serQ's dependencies, and
    one without click (``--python`` an interpreter that lacks vLLM too) said ``No module named 'click'``
    where it should say that vLLM is not installed."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(text + "\n")
        stream.flush()
    except (OSError, ValueError):  # a closed or broken stderr: what is said there is dropped
        pass


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        _say("usage: python -m serq_vllm.real SCENARIO.json (or - for standard input)")
        return 2
    try:
        scenario = read_scenario_file(argv[0])
    except _Unreadable as e:
        text = str(e)
        _say(text if ": error: " in text else f"error: {text}")
        return 1
    try:
        result = run_real(scenario)
    except (VllmNotInstalled, ScenarioError, ScenarioStuck) as e:
        _say(f"error: {e}")
        return 1
    print(json.dumps(result, indent=None))
    return 0


if __name__ == "__main__":
    sys.exit(main())
