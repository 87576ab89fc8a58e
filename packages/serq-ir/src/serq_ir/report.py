"""The result of a simulation: the figures a report shows, as msgspec Structs.

The simulator (serq-sim) fills a :class:`Result`; the reporters (serq-report) format it. JSON output is
this struct encoded, so its field names are the JSON report's keys. Non-finite numbers (an empty
statistic is NaN) encode as ``null``.
"""

from __future__ import annotations

import msgspec

#: Version of the report's JSON shape.
#: 3: observes have p50, p90, p95; instants; records, engine statistics (issue 12).
#: 4: the request metrics have ``std`` (vLLM's benchmark prints it: ``np.std``), and the requests their
#: total input and output tokens.
#: 5: the request metrics under an SLO have ``attainment``, the fraction of the completed requests that met it.
#: 6: ``codes`` beside ``notes``: the short code of each warning's kind, so that a report read back is
#: classified by its codes, never by its words.
#: 7: ``program.plugins``, the plugins that provide what the program names as a plugin's (written only when it
#: names one).
REPORT_VERSION = 7

#: The report version that last changed the figures a run has (what a sweep's table holds of a run): a sweep's
#: run keys hold it, so a table resumes across a version that changed only what is no figure (7:
#: ``program.plugins``). Raised with REPORT_VERSION when a figure is added, removed or changes.
FIGURES_VERSION = 6


class _S(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    pass


class ObserveStats(_S, kw_only=True):
    """One observe: sample count, mean, 95% batch-means CI half-width, cv², and the quantiles p50, p90,
    p95, p99 (each the ⌈q n⌉-th smallest sample; NaN below 40 samples)."""

    count: int
    mean: float
    ci: float
    cv2: float
    p50: float = float("nan")
    p90: float = float("nan")
    p95: float = float("nan")
    p99: float


class StageStats(_S, kw_only=True):
    """One stage member, over [warmup, end]."""

    name: str
    index: int | None  # its index in a stage array (`stage E[N]`, N = 1 too); None for a single stage
    present: float  # time-average number of jobs present
    utilisation: float
    completions: int
    throughput: float
    wait: float  # mean wait before service
    service: float  # mean time in service
    iterations: int | None = None  # step stages only
    # step stages only, after the warm-up (None otherwise):
    requests: int | None = None  # requests completed (whose first output token was produced here), not runs
    request_throughput: float | None = None  # requests / (end - warmup)
    prefill_only: int | None = None  # iterations that served prefills only
    decode_only: int | None = None  # ... decodes only
    mixed: int | None = None  # ... both (the rest of ``iterations`` only preempted)
    batch: float | None = None  # mean jobs served per iteration (decoders and prefills)
    tokens: float | None = None  # mean tokens per iteration
    token_utilisation: float | None = None  # tokens / budget summed over the iterations (NaN: budget inf)


class PoolStats(_S, kw_only=True):
    """One pool member, over [warmup, end]."""

    name: str
    index: int | None  # its index in a pool array (`pool kv[N]`, N = 1 too); None for a single pool
    used: float  # time-average allocated units
    cached: float  # time-average cached units
    queue: float  # time-average sessions waiting
    holders: float  # time-average holders
    wait: float  # mean queue wait of the admitted
    admissions: int
    evicted_entries: int
    evicted_units: float
    preemptions: int
    spills: int
    rejections: int
    stuck: int
    over_cap: int = 0


class MetricStats(_S, kw_only=True):
    """One of vLLM's serving metrics over the requests after the warm-up (seconds): count, mean, standard
    deviation (the population's, as ``np.std``), 95 % batch-means CI (NaN below 40 values), median and percentiles p90, p95, p99 as numpy's percentile
    (linear interpolation, vLLM's benchmark) computes them, to within rounding, but that one between a value
    and an infinity is the infinity (numpy's NaN); NaN without values."""

    count: int
    mean: float
    #: the population standard deviation of the values (vLLM's benchmark: ``np.std``), to within rounding
    std: float = float("nan")
    ci: float
    median: float
    p90: float
    p95: float
    p99: float


class RequestMetrics(_S, kw_only=True):
    """vLLM's serving-benchmark metrics of a record table with the columns sent, first_token,
    last_token and output (lib/vllm.sq's ``request``): per request TTFT = first_token - sent, TPOT =
    (last_token - first_token) / (output - 1) for output > 1, E2E latency (e2el) = last_token - sent;
    ITL, every gap between consecutive output tokens of a request on the step stages (serq-sim's
    step/tokens.py; None without a step stage), of the requests sent at or after the warm-up's end, as the
    rows are; throughputs over the measured window end - warmup (0, the rates NaN, for a run stopped before
    the warm-up's end); goodput, the requests that meet every SLO given (``--slo``) per second,
    and their attainment, the fraction of the completed requests that met every SLO (good / completed);
    the prefix-cache hit rate, when the table has the columns cached and prompt. With a column admitted
    (the request's first scheduling; lib/vllm.sq's ``admitted``), vLLM v1's per-request phases
    (``vllm/v1/metrics/stats.py``): queue = admitted - sent (``vllm:request_queue_time_seconds``), prefill =
    first_token - admitted (``vllm:request_prefill_time_seconds``), decode = last_token - first_token
    (``vllm:request_decode_time_seconds``), infer = last_token - admitted
    (``vllm:request_inference_time_seconds``), over the rows whose admitted is not negative (a negative one,
    lib/vllm.sq's -1, is a request never admitted); None without that column."""

    table: str
    completed: int  # the rows after the warm-up (requests sent after it and done by the end)
    duration: float  # end - warmup
    # vLLM's "Total input tokens" and "Total generated tokens" (its JSON's total_input_tokens and
    # total_output_tokens): sum(prompt), NaN without a prompt column, and sum(output) over the rows
    total_input_tokens: float = float("nan")
    total_output_tokens: float = float("nan")
    request_throughput: float  # completed / duration
    output_throughput: float  # output tokens / duration
    total_token_throughput: float  # (prompt + output tokens) / duration; NaN without a prompt column
    ttft: MetricStats
    tpot: MetricStats
    itl: MetricStats | None = None
    e2el: MetricStats
    # vLLM v1's phases of a request, None without an admitted column (a report written before them, too)
    queue: MetricStats | None = None
    prefill: MetricStats | None = None
    decode: MetricStats | None = None
    infer: MetricStats | None = None
    slo: dict[str, float] = {}
    good: int | None = None  # requests that meet every SLO
    goodput: float | None = None  # good / duration
    attainment: float | None = None  # good / completed: the fraction of the requests that met every SLO
    # sum(cached) / sum(prompt) over the rows (tokens): each request's hit at its first scheduling (vLLM's
    # num_cached_tokens), counted once, as vLLM 0.33.0's prefix_cache_hits / prefix_cache_queries count it (at
    # the step that admits the request; a preempted request's lookups apart), over the recorded requests; None
    # without those columns
    prefix_cache_hit_rate: float | None = None


#: The per-request statistics of :class:`RequestMetrics` (its MetricStats fields), in the report's order: the
#: text report's ``requests`` table lists these rows, the JSON report and a sweep's columns have them as keys.
REQUEST_STATS = ("ttft", "tpot", "itl", "e2el", "queue", "prefill", "decode", "infer")
#: vLLM v1's per-request phases (a table with an admitted column), by their names in REQUEST_STATS.
REQUEST_PHASES = ("queue", "prefill", "decode", "infer")


class GaugeStats(_S, kw_only=True):
    """One gauge: time average over [warmup, end], batch-means CI over 20 windows, least and greatest
    value held for a positive time."""

    mean: float
    ci: float
    min: float
    max: float


class PluginUse(_S, kw_only=True):
    """A plugin that provides what the program names as a plugin's (``stage s : @lcfs;``, ``evict @mru;``):
    the point and the name, the plugin by its registered name (an entry point's), its distribution and
    version (``None`` for a plugin registered in the process, of no distribution)."""

    point: str  # stage kind, eviction order, preemption policy or share policy
    name: str
    plugin: str | None
    distribution: str | None
    version: str | None


class ProgramInfo(_S, kw_only=True):
    """What ``serq run`` simulated: the program as it was given, and the IR it became."""

    path: str  # the program's path as given on the command line (a byte that is not UTF-8 as \xNN)
    sha256: str  # of the program file's bytes (hex)
    ir_sha256: str  # of the IR simulated: --set, --def and the run overrides applied, libraries included,
    # without source spans or the source's path (hex of the compact JSON, ``serq_ir.encode(spans=False)``)
    sets: dict[str, float] = {}  # every --set NAME=value
    defs: dict[str, str] = {}  # every --def NAME=expr
    # the plugins that provide what the program names as a plugin's, by point and name; absent (UNSET, not
    # written) when it names none, so a program of built-in kinds and policies has the report it had
    plugins: list[PluginUse] | msgspec.UnsetType = msgspec.UNSET


class Result(_S, kw_only=True):
    """Everything a report shows."""

    report_version: int = REPORT_VERSION
    serq_version: str | None = None  # the installed serq's version
    program: ProgramInfo | None = None  # filled by ``serq run``; None for a report made by the API
    horizon: float
    end: float
    warmup: float
    seed: int
    events: int
    arrivals: int
    ended: int
    turns: int
    mean_live: float
    interrupted: bool = False  # the run stopped before its end: the figures cover what was simulated
    partial: str | None = None  # why: "interrupted", "sigterm", "max-events", "max-wall", ...
    observes: dict[str, ObserveStats] = {}
    # observes whose value is the clock at every site (`observe done = now;`): instants, not durations,
    # so not in the observe table; their sample counts (the samples are in the dump and the API)
    instants: dict[str, int] = {}
    # the program's tables of records (`record NAME { … }`): rows after the warm-up (by their send time)
    records: dict[str, int] = {}
    requests: RequestMetrics | None = None  # vLLM's metric set, for a table of requests
    stages: list[StageStats] = []
    pools: list[PoolStats] = []
    gauges: dict[str, GaugeStats] = {}
    notes: list[str] = []
    # one a note, in the order of ``notes``: the short code of a warning's kind (serq_sim.notes.WARNING_CODES,
    # a plugin's own, or ``plugin`` for a plugin's warning that gives none), null for a note that is no warning
    codes: list[str | None] = []
