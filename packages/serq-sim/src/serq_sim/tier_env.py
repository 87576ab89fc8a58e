"""``SERQ_SIM_TIER``, read in one place: ``general`` runs every program on the general engine with the
reference code (the differential tests compare it with the fast tier, byte for byte); unset, empty or
``fast`` is the default, the fast tier where a program allows it; the words are read in any case and without the
blanks around them (``GENERAL``), as every word a ``SERQ_*`` variable takes is (``off`` of ``SERQ_MEMORY_SHARE``,
serq.switches' ``on``/``off``), and the message says so. Any other value is an error naming it:
a typo (``SERQ_SIM_TIER=genral``) silently ran the fast tier, so a comparison of the two tiers compared the
fast tier with itself."""

from __future__ import annotations

import os

#: what the variable may say (stripped, any case), and whether it forces the general engine
VALUES = {"": False, "fast": False, "general": True}


def forced_general() -> bool:
    """Whether ``SERQ_SIM_TIER`` forces the general engine; a :class:`serq.errors.UserError` for a value it
    does not take."""
    raw = os.environ.get("SERQ_SIM_TIER", "")
    value = raw.strip().lower()
    if value in VALUES:
        return VALUES[value]
    raise env_error("SERQ_SIM_TIER", raw, "'general' (every run on the general engine) or unset, empty or 'fast' "
                    "(the fast tier where a program allows it), either word in any case")


def check_environment() -> None:
    """Refuse now, as the :class:`serq.errors.UserError` each gives, a value of an environment variable every run
    reads that it does not take (``SERQ_SIM_TIER``, ``SERQ_MEMORY_SHARE``, ``SERQ_MEMORY_WORKERS``): what
    runs many (a sweep, a comparison, a search) checks it before its first run. Each run refused it alone, so
    a sweep ran every point to its error, wrote a table of errors (``--out``), said the first as a fault of its
    point (``note: `lambda` is 0.5, given by --set lambda``), and, the variable mended, resumed those errors
    as the runs' own."""
    from .memguard import machine_share

    forced_general()
    machine_share()


#: the code the error of :func:`env_error` carries (``code``): no result of the program, so a sweep's resume knows
#: a run that failed of it, which its table's ``warnings`` holds, and runs it again (docs/sweep.md)
ENVIRONMENT = "environment"


def env_error(name: str, raw: str, takes: str):
    """The :class:`serq.errors.UserError` of the environment variable ``name`` set to ``raw``, a value it does not
    take: the value shown (at most 40 characters, printable) and what it ``takes``; its ``code`` is
    :data:`ENVIRONMENT` (a sweep's run on a worker whose environment has it: serq_sweep.core.not_the_programs)."""
    from serq.errors import UserError, printable

    shown = raw if len(raw) <= 40 else raw[:37] + "..."
    error = UserError(f"the environment variable {name} is {printable(repr(shown))}: it is {takes}")
    error.code = ENVIRONMENT
    return error
