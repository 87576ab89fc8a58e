"""The names the language supplies."""

from __future__ import annotations

#: Context variables (language.txt §2); ``now`` is readable everywhere but a gauge.
CONTEXT = frozenset({
    "now", "size", "age", "last", "waiting", "present", "residents", "decoders", "kv_decode",
    "kv_prefill", "tokens", "prefilled", "attention", "decoding", "admission", "remaining", "position",
    "waited",
})
FUNCTIONS = {"min": (1, None), "max": (1, None), "abs": (1, 1), "floor": (1, 1), "ceil": (1, 1),
             "sqrt": (1, 1), "exp": (1, 1), "ln": (1, 1), "pow": (2, 2)}
DRAWS = {"exp": 1, "det": 1, "uniform": 2, "erlang": 2, "h2": 2, "bernoulli": 1}
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
KEYWORDS = frozenset({
    "let", "def", "use", "pool", "stage", "workload", "session", "server", "queue", "run", "share",
    "gauge", "cap", "block", "evict", "preempt", "admit", "via", "spill", "when", "fifo", "ps", "delay",
    "step", "budget", "cost", "chunk", "serve", "memory", "arrive", "trace", "init", "turn", "hidden",
    "request", "set", "observe", "hold", "reserve", "reuse", "at", "cache", "lease", "grow", "drop",
    "release", "load", "growing", "branch", "with", "else", "loop", "choose", "in", "by", "end", "mark",
    "prefill", "decode", "transfer", "tool", "on", "from", "to", "pull", "latency", "nic",
})
