"""The names the language supplies."""

from __future__ import annotations

from serq_ir import rules as _rules

#: Context variables (language.txt §2); ``now`` is readable everywhere but a gauge.
CONTEXT = frozenset({
    "now", "size", "age", "last", "waiting", "present", "residents", "decoders", "kv_decode",
    "kv_prefill", "tokens", "prefilled", "attention", "decoding", "admission", "remaining", "position",
    "waited",
})
#: the most arguments a call of ``min`` or ``max`` takes, as many as an aggregate writes out
#: (consts.MAX_TERMS), and the IR's own limit (serq_ir.rules.MAX_ARGS, kept apart):
#: each is some 1 KB of the simulator's generated code, and a call of 1 000 000 took 1.2 GB
MAX_ARGS = 10_000
#: function -> (the fewest arguments, the most)
FUNCTIONS = {"min": (1, MAX_ARGS), "max": (1, MAX_ARGS), "abs": (1, 1), "floor": (1, 1), "ceil": (1, 1),
             "sqrt": (1, 1), "exp": (1, 1), "ln": (1, 1), "pow": (2, 2)}


def arity_problem(name: str, n: int) -> str | None:
    """What is wrong with a call of the function ``name`` (of :data:`FUNCTIONS`) on ``n`` arguments, or None:
    the linker's words for a call anywhere, a ``let``'s included."""
    lo, hi = FUNCTIONS[name]
    if lo <= n and (hi is None or n <= hi):
        return None
    if hi is not None and lo != hi and n > hi:
        return (f"`{name}` takes at most {hi} arguments, got {n}; take the {name} of parts, "
                f"`{name}({name}(…), {name}(…))`, or write `{name} j in n (…)`")
    if lo != hi:
        return _rules.takes_at_least(name, n, lo)
    return takes(name, n)


DRAWS = {"exp": 1, "det": 1, "uniform": 2, "erlang": 2, "h2": 2, "bernoulli": 1}
#: the parameters of the builtins of a fixed arity, and the words for a call given another number of arguments:
#: serq_ir.rules' (the IR's validator says the same of an IR file's call)
PARAMS = _rules.PARAMS
takes = _rules.takes
#: other languages' names for what :data:`FUNCTIONS` has: the function that is it, or how it is written with
#: them (language.txt §2 has no logarithm to another base, no rounding to the nearest and no `**`)
FUNCTION_ALIASES = {
    "log": ("ln", "the natural logarithm"), "power": ("pow", ""), "fabs": ("abs", ""),
    "ceiling": ("ceil", ""), "minimum": ("min", ""), "maximum": ("max", ""),
    "log10": ("", "the logarithm to base 10 is `ln(x) / ln(10)`"),
    "log2": ("", "the logarithm to base 2 is `ln(x) / ln(2)`"),
    "round": ("", "rounding to the nearest is `floor(x + 0.5)`"),
    # a KV-usage router's share of the cache: a pool's cap is a setting, not live state
    "cap": ("", "a pool's cap is no observable: write the cap's own expression (`blocks * bs` of `pool kv { cap "
                "blocks * bs; }`), or `used(p) + free(p)`, which is the cap where the pool's holds do not "
                "`reserve held`"),
}
FUNCTION_ALIASES["capacity"] = FUNCTION_ALIASES["cap"]


def function_hint(name: str, candidates: list[str]) -> str:
    """The end of the message for a call of the unknown function ``name``: `` (did you mean `ln`?)`` for
    another language's name of one of :data:`FUNCTIONS` (`log`), what the language writes instead where it
    has no such function (`log10`), else the closest of ``candidates`` (the functions, observables and
    definitions the call could have meant), as every unknown name is told."""
    from serq.errors import did_you_mean

    if name in FUNCTION_ALIASES:
        same, note = FUNCTION_ALIASES[name]
        if same:
            return f" (did you mean `{same}`{', ' + note if note else ''}?)"
        return f": the language has no `{name}`; {note}"
    return did_you_mean(name, candidates)
#: observable -> (kind of its target, number of further arguments)
OBSERVABLES = {
    "queue": ("stage", 0), "busy": ("stage", 0), "work": ("stage", 0), "used": ("pool", 0),
    "free": ("pool", 0), "cachedin": ("pool", 0), "holders": ("pool", 0), "queued": ("pool", 0),
    "budget_left": ("stage", 0), "price": ("stage", 2), "est_lambda": ("stage", 0),
    "est_rho": ("stage", 0), "est_wait": ("stage", 0), "blocksize": ("pool", 0),
}
#: the observables that read live pool or stage state (``blocksize`` folds to the pool's block)
LIVE_OBSERVABLES = frozenset(OBSERVABLES) - {"blocksize"}
BUILTIN_ATTRIBUTES = ("serial", "turn_no", "cached", "computed")
TRACE_ATTRIBUTES = ("new", "out", "think", "more", "forced")


def supplied(name: str) -> str:
    """What a name the language supplies is (language.txt §2: "the context variables, inf")."""
    return "the language's infinity" if name == "inf" else "a context variable"


def language_name(name: str, trace: bool = False) -> str | None:
    """What ``name`` is when the language supplies it for an expression to read (language.txt §2: the context
    variables and ``inf``; the built-in attributes and, beside a ``trace``, the trace's columns), or None: the
    one rule of the names a substituted name may not take (a queue entry's parameter, an ``at admission``
    binding): the caller's argument would stand where the body meant the clock, the session's serial or the
    turn's prompt (a binding ``new = 1`` beside a trace was taken, and the hold's body read 1 for ``new``)."""
    if name == "inf":
        return "the language's infinity"
    if name in CONTEXT:
        return "a context variable"
    if name in BUILTIN_ATTRIBUTES:
        return "a built-in attribute"
    if trace and name in TRACE_ATTRIBUTES:
        return "an attribute each turn of the trace gives"
    return None


def declared_name_problem(what: str, name: str, trace: bool) -> str | None:
    """Why a pool, a stage or a queue (``what``; a queue's own pool too) may not be named ``name``, or None:
    language.txt §2, attributes and the names the language supplies have names of their own, so a
    declaration may not take a context variable's name, ``inf``, a built-in attribute's or, beside a
    ``trace``, a trace column's. The one rule of every such declaration: a queue's own pool named ``serial``
    was taken, and its entries' ``serial`` read the pool (```q.serial` is a pool, not a value``)."""
    if name in CONTEXT or name == "inf":
        return f"the {what} `{name}` has the name of {supplied(name)}"
    if name in BUILTIN_ATTRIBUTES or (trace and name in TRACE_ATTRIBUTES):
        return (f"the {what} `{name}` has the name of {attribute_kind(name)}; give the {what} another name (a pool, "
                "a stage and an attribute have names of their own)")
    return None


def attribute_kind(name: str) -> str:
    """What a built-in or a trace attribute ``name`` is, for a message refusing a declaration of its name."""
    return "a built-in attribute of a session" if name in BUILTIN_ATTRIBUTES else "an attribute each turn of the trace gives"
KEYWORDS = frozenset({
    "let", "def", "use", "pool", "stage", "workload", "session", "server", "queue", "run", "share",
    "gauge", "cap", "block", "evict", "preempt", "admit", "via", "spill", "when", "fifo", "ps", "delay",
    "step", "budget", "cost", "chunk", "serve", "memory", "arrive", "trace", "init", "turn", "hidden",
    "request", "set", "observe", "hold", "reserve", "reuse", "at", "cache", "lease", "grow", "drop",
    "release", "load", "growing", "branch", "with", "else", "loop", "choose", "in", "by", "end", "mark",
    "prefill", "decode", "transfer", "tool", "on", "from", "to", "pull", "latency", "nic", "record",
})

#: words that start a construct in another dialect of serQ (the reference implementation's later one,
#: and older drafts), with what this language writes instead. They are not keywords here: each is an
#: ordinary name wherever a name may stand (``let state = 1;``, ``set while = 2;``), so they are
#: recognised only where a syntax error shows the other dialect's construct.
DIALECT: dict[str, str] = {
    "claim": "a session takes units of a pool with `hold POOL (units) { … }`",
    "fork": "a session is one sequence of statements; `run A, B (w);` is one job on several stages",
    "join": "a session is one sequence of statements; `run A, B (w);` is one job on several stages",
    "iteration": "a step engine is a stage, `stage NAME : step { budget …; cost …; }`",
    "state": "a session's attributes are set with `set NAME = expr;`",
    "while": "a loop is `loop { … }`, left with `end;` in a `branch`",
    "fn": "a program is its items at the top level, without `fn main() { … }`",
    "push": "",
    "engine": "an engine is a stage, `stage NAME : step { … }`",
    "cost": "a hold's units and a run's work are written as they are, `hold kv (n) { run s (w); }`",
    "return": "a definition that gives a value is `def NAME(PARAM, …) = expr;`",
    "if": "a test is `branch (test) { … } else { … }`",
}


def word_kind(name: str) -> str | None:
    """What the language uses ``name`` for, when it does, so that a definition may not take it:
    ``"keyword"``, ``"function"`` (a function, a draw, an observable, ``member``) or ``"name"`` (a context
    variable, a built-in attribute, ``inf``); None for a name free to take."""
    if name in KEYWORDS:
        return "keyword"
    if name in FUNCTIONS or name in DRAWS or name in OBSERVABLES or name == "member":
        return "function"
    if name in CONTEXT or name in BUILTIN_ATTRIBUTES or name == "inf":
        return "name"
    return None


def not_in_language(word: str) -> str:
    """The message for a construct of another dialect that starts with ``word``."""
    hint = DIALECT.get(word)
    return f"`{word}` is not part of this language" + (f"; {hint}" if hint else "")


def declared_not_defined(name: str, what: str) -> str:
    """The message for ``name(…);`` written as a statement where ``name`` is declared, not defined: ``what``
    is what declares it (:func:`serq_frontend.ast.declared_names`: "a stage", "a pool", …). A stage is
    run and a pool held by a statement that names them (``tool`` alone is also a statement: the language's
    own stage of that name)."""
    form = {"a stage": f"; a session runs it with `run {name} (…);`",
            "a pool": f"; a session holds it with `hold {name} (…) {{ … }}`"}.get(what, "")
    return f"`{name}(…);`: `{name}` is {what}, not a statement definition{form}"


def binding_outside(name: str) -> str:
    """The message for ``name``, an ``at admission`` binding, read outside every hold that binds it: by the
    sugar layer where the hold's body reads the binding (sugar.admission), and by the linker where it does not
    (the binding then has no attribute for the read to find: Linker.var)."""
    return f"`{name}` is an `at admission` binding, readable only inside the holds that bind it"
