"""The two sides: ``workload { session { … request; … } }`` and ``server { … }``, spliced at every
``request;`` into the one session block of the kernel."""

from __future__ import annotations

from typing import Any

from .. import ast as A
from ..parser import grammar_text
from . import SugarLayer

BUILDERS = {
    "server_item": lambda b, p, c: A.ServerItem(c[0], p),
    "wl_session": lambda b, p, c: A.WlItem("session", p, c[0]),
    "s_request": lambda b, p, c: _s_request(b, p, c),
}


def _s_request(b: Any, p: Any, c: list[Any]) -> A.SRequest:
    if c[0] is None:
        return A.SRequest(None, p)
    # `request gw;` is the queues layer's to expand or refuse (an unknown gateway, a queue that is none, a
    # place a request may not stand), also in a program that declares no queue: that layer runs when a
    # rule of its own was built, and this rule is this layer's
    b.seen.add("queues")
    return A.SRequest(str(c[0]), p)


def _check_server(ctx: Any, stmts: list[Any]) -> None:
    for s in A.walk_stmts(stmts):
        if isinstance(s, A.STurn):
            raise ctx.error(s.pos, "`turn;` in a server: the next turn is the session's side (write it in "
                            "the workload's session); a server is done with a request when its block is")
        if isinstance(s, A.SEnd):
            raise ctx.error(s.pos, "`end;` in a server: the exit is the session's side (write it in the "
                            "workload's session)")
        if isinstance(s, A.SRequest):
            raise ctx.error(s.pos, "`request;` inside server: a server does not request itself; `request;` "
                            "belongs to the workload's session")


def _splice(stmts: list[Any], server: list[Any], count: list[int], ctx: Any) -> list[Any]:
    size = A.block_size(server)

    def f(s: Any) -> list[Any] | None:
        if isinstance(s, A.SRequest) and s.gateway is None:
            count[0] += 1
            # a copy of the server's body at each `request;`, counted with the definitions' and aggregates'
            # copies against one limit (Context.write_out), before it is made: a server of 3 000 statements
            # requested 3 000 times (a file of 110 kB) made 9 000 000 and ran out of 4 GB after minutes
            ctx.write_out(size, s.pos, "this `request;` (the server's body, written out here)")
            return [A.map_stmt(x, fb=lambda b: b) for x in server]
        return None

    return A.rewrite_block(stmts, f)


def rewrite(module: A.Module, ctx: Any) -> A.Module:
    servers = [i for i in module.items if isinstance(i, A.ServerItem)]
    sessions = [i for i in module.items if isinstance(i, A.SessionItem)]
    wl_sessions = [(item, w) for item in module.items if isinstance(item, A.WorkloadItem)
                   for w in item.items if w.kind == "session"]
    for s in sessions:
        for x in A.walk_stmts(s.body):
            if isinstance(x, A.SRequest):
                raise ctx.error(x.pos, "`request;` in a top-level session: the session there is the whole "
                                "path; with a server, write the session inside the workload")
    if len(servers) > 1:
        raise ctx.error(servers[1].pos, "a second `server`: a program has one")
    if len(wl_sessions) > 1:
        raise ctx.error(wl_sessions[1][1].pos, "a second `session` in the workload")
    if not servers and not wl_sessions:
        return module
    if sessions and (servers or wl_sessions):
        other = servers[0] if servers else wl_sessions[0][1]
        raise ctx.error(other.pos, "a top-level `session` and the two sides (a workload's `session` and a "
                        "`server`) are exclusive: write one form")
    server = servers[0].body if servers else None
    if server is not None:
        _check_server(ctx, server)
    if server is not None and not wl_sessions:
        raise ctx.error(servers[0].pos, "a `server` that is never requested: the workload has no `session` "
                        "saying `request;`")
    wl_item, wl_session = wl_sessions[0]
    body = wl_session.arg
    count = [0]
    if server is not None:
        body = _splice(body, server, count, ctx)
    else:
        for x in A.walk_stmts(body):
            if isinstance(x, A.SRequest) and x.gateway is None:
                raise ctx.error(x.pos, "`request;` with no `server`: declare a `server { … }` block, or "
                                "name a gateway, `request gw;`")
        # §2: "a workload's session without a server … is an error", unless it requests a gateway (the
        # queues layer, before this one, expanded each `request gw;` and counted it)
        if not ctx.notes.get("gateway_requests"):
            raise ctx.error(wl_session.pos, "a workload's `session` with no `server` and no `request gw;`: "
                            "the session's side requests (`request;` of a `server { … }` block, or a "
                            "gateway's route); a session that is the whole path is written at top level")
    if server is not None and count[0] == 0:
        raise ctx.error(servers[0].pos, "a `server` that is never requested: the workload's session has "
                        "no `request;`")
    out = []
    for item in module.items:
        if isinstance(item, A.ServerItem):
            continue
        if item is wl_item:
            rest = [w for w in item.items if w is not wl_session]
            out.append(A.WorkloadItem(rest, item.pos))
            out.append(A.SessionItem(body, wl_session.pos))
            continue
        out.append(item)
    return A.Module(out, module.file)


LAYER = SugarLayer("sides", grammar_text("sides"), BUILDERS, rewrite)
