"""The memory guard: a run under a limit on its memory (``ulimit -v``, the address space, or ``ulimit -d``,
the data segment) stops with its partial report, reason ``memory``, while it still has room to make the
report, instead of running into the limit.

Running into it is not a clean failure in CPython: an allocation that fails raises ``MemoryError`` at
whatever line allocates, and what handles it needs memory too; in the interpreter itself (its frame
stack) it may come back as ``SystemError: error return without exception set``, and near the limit every
allocation that misses the free lists tries the kernel and fails, so a run can crawl for minutes before
it fails. The guard reads what the process uses (``/proc/self/statm``: the figures the kernel compares
with the limits) at the event loop's ticks (every ``TICK`` events) and when a batch is spawned, and
stops the run once it has used ``SHARE`` of the room it had when the run began.

Without such a limit the machine's memory bounds a run all the same, and running into it is worse: the
kernel's OOM killer ends the process (``serq sweep`` of a rate of 1e12 was killed, exit 137, its report
lost), or the machine swaps. So the guard also bounds the run's resident memory (``statm``'s second
field) by ``SHARE`` of the memory available when the run began (:func:`available`: ``MemAvailable`` of
``/proc/meminfo``, or less, the room below the run's control group's limit), whatever the ulimits, or by the
share ``SERQ_MEMORY_SHARE`` gives (:func:`machine_share`; ``off``, in any case: none; a share that leaves a run
less than :data:`MIN_ROOM` to grow by, divided among the runs in parallel, is refused). Where ``/proc`` is not there it costs
nothing: :func:`memory_guard` is ``None``."""

from __future__ import annotations

import os

#: the share of the room below the limit (when the run began) a run may use: the rest is for its report
#: (the fast tier's report rebuilds the sessions waiting at its pools as the general engine keeps them)
SHARE = 0.5
_STATM = "/proc/self/statm"
_MEMINFO = "/proc/meminfo"
#: a control group's memory limit and what it uses (version 2, then version 1): a container's memory
_CGROUPS = (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
            ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"))
#: the limit :func:`available` names, each as the guard's sentence names it
MACHINE = "resident memory the machine had room for when the run began (MemAvailable)"
CGROUP = "resident memory its control group had room for when the run began (memory.max)"


class MemoryGuard:
    """The limits in force, each as ``(field of statm, bound in bytes, limit in bytes, its name)``."""

    __slots__ = ("limits", "page", "kept")

    def __init__(self, limits: list[tuple[int, int, int, str]], page: int, kept: dict[str, str] | None = None):
        self.limits = limits
        self.page = page
        #: by a limit's name, what the note says of the room the run may not take, where that is not the
        #: usual half kept for the report (:func:`memory_guard`: another share of the machine's memory)
        self.kept = kept or {}

    def over(self) -> str | None:
        """Why the run must stop now (a sentence), or ``None``."""
        try:
            fields = _statm()
        except OSError:
            return None
        for field, bound, limit, name in self.limits:
            used = int(fields[field]) * self.page
            if used > bound:
                kept = self.kept.get(name, "the rest is kept to make this report")
                return f"stopped near the memory limit: {_mib(used)} of the {_mib(limit)} {name} in use ({kept})"
        return None


def hint(samples: int | None, by: str = "") -> str:
    """Where memory ran out, said after "out of memory", with what bounds it there: ``samples`` a run held
    (``--max-samples N`` stops a run once it holds N), none, or ``None`` before the run began (compiling
    the program, setting up its run), where no sample exists that ``--max-samples`` could bound. The one rule
    of the partial report's note (engine.Simulation.out_of_memory, both tiers) and of ``serq run``'s line
    when no report could be made (serq.errors.OutOfMemory). ``by``: the observe (gauge, record) holding most
    of the samples, ``N of them by observe x at FILE:LINE:COL``, named after their count where known."""
    if samples is None:
        return "compiling the program, before its run began (--max-samples bounds only the samples a run holds)"
    if not samples:
        return "holding no samples (--max-samples bounds only the samples a run holds)"
    by = f", {by}" if by else ""
    return f"holding {samples} samples{by} (--max-samples N stops a run once it holds N)"


def escaped(e: MemoryError, samples: int | None) -> MemoryError:
    """What a MemoryError that no report could be made of is raised as: ``e`` itself where a run held
    ``samples`` (``serq run``'s line names ``--max-samples``) or it says where already, else
    :class:`serq.errors.OutOfMemory` saying where (:func:`hint`)."""
    from serq.errors import OutOfMemory

    return e if samples or isinstance(e, OutOfMemory) else OutOfMemory(hint(samples))


def _statm() -> list[bytes]:
    """The fields of ``/proc/self/statm``, read through a descriptor closed whatever happens: the guard
    reads it near a memory limit, where a buffered file's own allocations can fail between its opening
    and its ``with`` (a MemoryError there left the file to the collector: a ResourceWarning)."""
    return _read(_STATM, 4096).split()


def _read(path: str, size: int) -> bytes:
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


def available() -> tuple[int, str] | None:
    """The bytes of memory this process may still take, and which limit that is (:data:`MACHINE`,
    :data:`CGROUP`): the machine's available memory (``MemAvailable``, what the kernel can give without
    swapping), or the room below the control group's limit where that is less; ``None`` where neither can be
    read."""
    out: tuple[int, str] | None = None
    try:
        for line in _read(_MEMINFO, 1 << 16).splitlines():
            if line.startswith(b"MemAvailable:"):
                out = (int(line.split()[1]) * 1024, MACHINE)
                break
    except (OSError, ValueError, IndexError):
        pass
    for limit_path, used_path in _CGROUPS:
        try:
            limit = _read(limit_path, 64).strip()
            if limit == b"max":  # (version 2, no limit)
                break
            room = max(int(limit) - int(_read(used_path, 64).strip()), 0)
        except (OSError, ValueError):
            continue
        if out is None or room < out[0]:
            out = (room, CGROUP)
        break
    return out


def _mib(n: int) -> str:
    return f"{n / 2**20:.0f} MiB"


def memory_guard() -> MemoryGuard | None:
    """The guard for the limits of this process (its ulimits, and the memory available: :func:`available`),
    or ``None`` when there is none (or what is used cannot be read)."""
    try:
        import resource
    except ImportError:  # not on this system
        return None
    try:
        fields = _statm()
        page = os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None
    limits = []
    # statm: size (the address space, what RLIMIT_AS bounds), ..., data (data and stack: RLIMIT_DATA)
    for rl, field, name in ((resource.RLIMIT_AS, 0, "address space (ulimit -v)"),
                            (getattr(resource, "RLIMIT_DATA", None), 5, "data segment (ulimit -d)")):
        if rl is None:
            continue
        soft = resource.getrlimit(rl)[0]
        if soft == resource.RLIM_INFINITY or soft <= 0:
            continue
        used = int(fields[field]) * page
        room = max(soft - used, 0)
        limits.append((field, used + int(room * SHARE), soft, name))
    free = available()
    share = machine_share(free)
    if share is None:
        free = None
    kept: dict[str, str] = {}
    if free is not None:  # statm: ..., resident (what the machine's memory holds), ...
        used = int(fields[1]) * page
        limits.append((1, used + int(free[0] * share), used + free[0], free[1]))
        if share != SHARE:  # (the note's "the rest is kept to make this report" said half was kept)
            kept = {free[1]: _share_kept(share, free[0])}
    return MemoryGuard(limits, page, kept) if limits else None


def _share_kept(share: float, free: int) -> str:
    """What a stopped run's note says of the machine's memory when a run may grow by another ``share`` of
    the ``free`` bytes than :data:`SHARE`: how much, and why (``SERQ_MEMORY_SHARE``, runs in parallel). The
    note said "(the rest is kept to make this report)", so that ``SERQ_MEMORY_SHARE=0.0001`` stopped a run
    at "29 MiB of the 23600 MiB … in use" with no word of what stopped it."""
    why = []
    raw = os.environ.get("SERQ_MEMORY_SHARE", "").strip()
    if raw:
        why.append(f"SERQ_MEMORY_SHARE={float(raw):g}")
    runs = parallel_runs()
    if runs > 1:
        why.append(f"divided among {runs} runs at once")
    room = int(free * share)
    size = _mib(room) if room >= 2**20 else f"{room / 2**10:.0f} KiB"
    return f"the run may grow by {share:.3g} of it, {size}: {', '.join(why)}"


#: the environment variable a sweep's local worker processes are started with: how many of them run at once on
#: this machine, among which the share of the available memory is divided (:func:`machine_share`)
WORKERS_VAR = "SERQ_MEMORY_WORKERS"


#: the least a share of the machine's memory (SERQ_MEMORY_SHARE, divided among parallel runs) may leave a run to grow
#: by: what it takes before its first event (its compiled program, the fast tier's buffers: 0.5 to 9 MiB for the
#: examples), twice over. A share that left less stopped the run at its first check, at t = 0, a partial report of
#: nothing (``SERQ_MEMORY_SHARE=1e-320``)
MIN_ROOM = 16 * 2**20


def machine_share(free: tuple[int, str] | None | bool = True, runs: int | None = None) -> float | None:
    """The share of the memory available when a run begins that its resident memory may grow by:
    ``SERQ_MEMORY_SHARE``, a number above 0 and at most 1 (unset or empty: :data:`SHARE`), or ``off``
    (``None``: no bound of the machine's, only a ulimit's). A run that needs more than half of what a busy
    machine has free, and a user who knows the report fits in the rest, says so; any other value is a
    :class:`serq.errors.UserError` naming it, as ``SERQ_SIM_TIER``'s (a typo silently kept the default).

    In a process that is one of N runs in parallel on this machine (a sweep's local workers, started with
    :data:`WORKERS_VAR` set to N) the share is divided by N: each worker read the memory available when its
    own run began, the same memory, and N workers each growing by half of it ran the machine out (the kernel's
    OOM killer, a point's worker lost); together they now grow by the share at most.

    ``free``: the memory available (:func:`available`; ``True``: read it now). A share it gives that leaves the run
    less than :data:`MIN_ROOM` to grow by, where a larger share would leave that much, is refused too, the message
    saying the shares this machine takes (:func:`_too_small`): such a run stopped at its first check, t = 0.
    ``runs``: how many runs at once divide it (None: :func:`parallel_runs`, this process's), for a sweep that
    asks before it starts its N workers, each of which would refuse it for every run (a table of errors)."""
    raw = os.environ.get("SERQ_MEMORY_SHARE", "")
    value = raw.strip().lower()
    if not value:
        share = SHARE
    elif value == "off":
        return None
    else:
        from serq import numbers

        # serq.numbers' rule, as every number a user gives: float() took other scripts' digits ('٠.٥'),
        # '1_0' and 'infinity', where SERQ_MEMORY_WORKERS took only the digits 0-9
        try:
            share = numbers.number(value)
        except numbers.NotANumber:
            share = -1.0
        if not 0.0 < share <= 1.0:
            from .tier_env import env_error

            raise env_error("SERQ_MEMORY_SHARE", raw, "the share of the memory available when a run begins that the "
                            f"run may grow by, a number above 0 and at most 1 (unset or empty: {SHARE:g}), or 'off' in any "
                            "case (no bound but a ulimit's)" + _hint(value, float, numbers.NUMBER_HINT))
        if free is True:
            free = available()
        if free is not None:
            _too_small(raw, share, free, runs)
    return share / (parallel_runs() if runs is None else runs)


def _too_small(raw: str, share: float, free: tuple[int, str], runs: int | None = None) -> None:
    """Refuse ``SERQ_MEMORY_SHARE`` (``raw``, read as ``share``) where the room it leaves a run of the ``free`` bytes
    available, divided among the parallel runs, is less than :data:`MIN_ROOM` and a share of at most 1 would leave
    that much: a :class:`serq.errors.UserError` naming the variable and the shares from the least that does to 1."""
    runs = parallel_runs() if runs is None else runs
    if free[0] // runs < MIN_ROOM or int(free[0] * share / runs) >= MIN_ROOM:
        return  # (the machine's memory is what is short, not the share; or the share leaves room enough)
    import math

    least = MIN_ROOM * runs / free[0]
    step = 10.0 ** (math.floor(math.log10(least)) - 2)
    shown = math.ceil(least / step) * step  # (3 digits, rounded up: the least share shown is taken)
    while int(free[0] * float(f"{shown:.3g}") / runs) < MIN_ROOM:
        shown += step
    room = int(free[0] * share / runs)
    among = f", divided among {runs} runs at once (a sweep's workers: SERQ_MEMORY_WORKERS)" if runs > 1 else ""
    from .tier_env import env_error

    raise env_error("SERQ_MEMORY_SHARE", raw, "the share of the memory available when a run begins that the run may "
                    f"grow by, on this machine a number from {shown:.3g} to 1, or 'off' in any case (no bound but a "
                    "ulimit's): "
                    f"{share:.3g} of the {_mib(free[0])} {free[1]}{among} leaves it {_size(room)}, less than the "
                    f"{_mib(MIN_ROOM)} a run may take before its first event")


def _size(n: int) -> str:
    """``n`` bytes in MiB, KiB or bytes, whichever shows it above 1."""
    if n >= 2**20:
        return _mib(n)
    return f"{n / 2**10:.0f} KiB" if n >= 2**10 else f"{n} bytes"


def parallel_runs() -> int:
    """How many runs this process runs beside on this machine (:data:`WORKERS_VAR`; 1 when it is unset). A value
    that is not a whole number from 1 to 4096 is a :class:`serq.errors.UserError` naming it."""
    raw = os.environ.get(WORKERS_VAR, "")
    value = raw.strip()
    if not value:
        return 1
    # (its digits past leading zeros, at most 4, first: int() of 5 000 digits raised a ValueError past Python's
    # limit, a traceback)
    digits = value.lstrip("0")
    if value.isascii() and value.isdigit() and len(digits) <= 4 and 1 <= int(digits or "0") <= 4096:
        return int(digits)
    from serq import numbers

    from .tier_env import env_error

    raise env_error(WORKERS_VAR, raw, "how many runs run at once on this machine, among which the share of its "
                    "available memory is divided (a sweep's local workers are started with it): a whole number "
                    "from 1 to 4096" + _hint(value, int, numbers.WHOLE_HINT))


def _hint(value: str, kind: type, hint: str) -> str:
    """serq.numbers' hint at its rule, `` (…)``, when Python's ``kind`` reads ``value`` (stripped) though the
    rule does not (``٣``, ``٠.٥``, ``1_0``, ``+1``); empty otherwise (serq.numbers.rule_hint; ``hint`` is the
    one it gives of ``kind``)."""
    from serq import numbers

    return numbers.rule_hint(value, kind)
