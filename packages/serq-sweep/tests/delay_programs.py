"""The small sweep programs the tests of tables, records and plots run: a delay stage of ``a`` (a let a sweep
sets) behind Poisson arrivals, each session observing and recording what it waited, written once here."""

from __future__ import annotations


def delay_program(*, horizon: float = 5, observe: bool = True, record: str | None = "wait = now - t0;") -> str:
    """``let a = 1;`` and a delay stage of ``a`` behind ``arrive poisson(1)``; each session observes ``w`` (its
    time there) when ``observe``, and records the row ``req { RECORD }`` when ``record`` is given; seed 1,
    horizon ``horizon``."""
    lines = ["let a = 1;", "stage s : delay;", "workload { arrive poisson(1); }", "session {", "  set t0 = now;",
             "  run s (a);"]
    if observe:
        lines.append("  observe w = now - t0;")
    if record is not None:
        lines.append(f"  record req {{ {record} }}")
    lines += ["  end;", "}", f"run {{ horizon {horizon:g}; seed 1; }}", ""]
    return "\n".join(lines)
