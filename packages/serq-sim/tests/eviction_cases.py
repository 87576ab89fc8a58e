"""An eviction order's hand case, written once for the plugin tests of serq-sim."""

from __future__ import annotations


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
