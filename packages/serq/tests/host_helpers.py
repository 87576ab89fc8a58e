"""Helpers for the host's tests: run the command as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parents[3]


def run_serq(*args: str, env: dict[str, str] | None = None, cwd: str | Path | None = None,
             module: bool = False) -> subprocess.CompletedProcess:
    """Run ``serq ARGS`` (or ``python -m serq ARGS``) in a child process."""
    full_env = {**os.environ, **(env or {})}
    cmd = [sys.executable, "-m", "serq", *args] if module else [str(BIN / "serq"), *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=full_env, cwd=cwd, timeout=120)


def mm1_ir(tmp_path, observe: str = "response") -> Path:
    """An M/M/1 program written as an IR file in ``tmp_path`` (``mm1.ir.json``)."""
    import serq_ir
    from serq_ir import nodes as n

    attrs = [n.Attribute(name=a, builtin=True) for a in n.BUILTIN_ATTRIBUTES] + [n.Attribute(name="t0")]
    program = n.Program(
        version=n.IR_VERSION, attributes=attrs, observes=[n.ObserveDecl(name=observe)],
        stages=[n.Stage(name="server", kind=n.Fifo())], workload=n.Workload(arrive=n.Poisson(rate=0.8)),
        session=[n.Set(slot=4, value=n.Ctx(name="now")),
                 n.Run(stages=[n.StageRef(stage=0)], work=n.Draw(dist="exp", args=[n.Num(value=1.0)])),
                 n.Observe(observe=0, value=n.Binary(op="-", lhs=n.Ctx(name="now"), rhs=n.Attr(slot=4)))],
        run=n.RunSettings(horizon=1000.0))
    path = tmp_path / "mm1.ir.json"
    path.write_bytes(serq_ir.encode(program))
    return path


def commands(group, ctx, prefix=()):
    """``(names, command)`` of every command under the click ``group``, subcommands of subgroups too."""
    import click

    for name in group.list_commands(ctx):
        cmd = group.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            yield from commands(cmd, ctx, (*prefix, name))
        elif cmd is not None:
            yield (*prefix, name), cmd


def returning_sessions(order: str, cap: int, first: int, second: int) -> str:
    """Three sessions on a pool of ``cap`` units without blocks under ``evict ORDER`` (an entry evicted whole):
    session 0 caches ``first`` units at t=1, session 1 ``second`` at t=2; at t=3 session 2 holds 8 and the
    order picks whom to evict; session 0 comes back at t=11 (its hit, ``hit0``) and session 1 at t=12
    (``hit1``). An eviction order's hand case (the plugin tests and the docs' example of a plugin)."""
    return f"""pool p {{ cap {cap}; evict {order}; }}
stage d : delay;
workload {{ arrive batch(3); }}
session {{
  branch (serial == 0) {{
    hold p ({first}) {{ run d (1); }} cache ({first});
    run d (10);
    hold p ({first}) {{ observe hit0 = cached; run d (1); }} cache ({first});
  }} else {{
    branch (serial == 1) {{
      run d (1);
      hold p ({second}) {{ run d (1); }} cache ({second});
      run d (10);
      hold p ({second}) {{ observe hit1 = cached; run d (1); }} cache ({second});
    }} else {{
      run d (3);
      hold p (8) {{ run d (1); }}
    }}
  }}
}}
run {{ horizon 100; }}
"""
