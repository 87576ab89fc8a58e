"""`serq check` (and every command that loads IR) refuses an IR file naming a stage kind or policy that
no installed plugin registers, at the extension's JSON path."""

from __future__ import annotations

import json

from host_helpers import mm1_ir, run_serq

SHARED = """stage a : ps(1);
stage b : ps(2);
share maxmin;
workload { arrive poisson(0.5); }
session { run a, b (~exp(1)); }
run { horizon 10; }
"""


def _first_line(path, value, message):
    """The first line of the error about ``value`` (its JSON text, found once in the file): the file's
    line and column of that value, as a source's mistake is told."""
    text = path.read_text()
    assert text.count(value) == 1
    at = text.index(value)
    line = text.count("\n", 0, at) + 1
    col = at - (text.rfind("\n", 0, at) + 1) + 1
    return f"{path}:{line}:{col}: error: {message}"


def _edit(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    return path


def test_an_unregistered_stage_kind_in_ir_is_refused_at_its_path(tmp_path):
    path = _edit(mm1_ir(tmp_path), lambda d: d["stages"][0].update(kind={"kind": "Extension", "name": "batch"}))
    r = run_serq("check", str(path))
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert lines[0] == _first_line(path, '"batch"', "stage server: unknown stage kind 'batch' (no plugin registers "
                                   "stage kinds; built in: fifo, ps, delay, step); a plugin adds stage kinds by the hook "
                                   "serq_sim_register_stage_kinds, installed with an entry point in the group 'serq' "
                                   "(docs/hooks.md) - at '$.stages[0].kind.name'")
    assert len(lines) == 3 and lines[2].strip() == "^"
    assert run_serq("run", str(path)).stderr == r.stderr


def test_an_unregistered_eviction_order_in_ir_is_refused_at_its_path(tmp_path):
    def add_pool(d):
        d["pools"] = [{"name": "kv", "cap": 4.0, "evict": {"kind": "Extension", "name": "largest"}}]

    path = _edit(mm1_ir(tmp_path), add_pool)
    r = run_serq("check", str(path))
    assert r.returncode == 1
    assert r.stderr.splitlines()[0] == _first_line(
        path, '"largest"', "pool kv: unknown eviction order 'largest' (no plugin registers eviction orders; "
        "built in: lru, by (…)); a plugin adds eviction orders by the hook serq_sim_register_eviction_orders, "
        "installed with an entry point in the group 'serq' (docs/hooks.md) - at '$.pools[0].evict.name'")


def test_an_unregistered_share_policy_in_ir_is_refused(tmp_path):
    src = tmp_path / "shared.sq"
    src.write_text(SHARED)
    ir = run_serq("ir", str(src))
    assert ir.returncode == 0, ir.stderr
    path = tmp_path / "shared.ir.json"
    path.write_text(ir.stdout.replace('"share": "maxmin"', '"share": "fair"'))
    r = run_serq("check", str(path))
    assert r.returncode == 1
    line, col = 1 + ir.stdout[: ir.stdout.index('"share"')].count("\n"), 1 + len('  "share": ')
    assert ir.stdout.splitlines()[line - 1].startswith('  "share": ')
    assert r.stderr == (f"{path}:{line}:{col}: error: unknown share policy 'fair' (no plugin registers share policies; built in: maxmin, "
                        "bottleneck); a plugin adds share policies by the hook serq_sim_register_share_policies, "
                        "installed with an entry point in the group 'serq' (docs/hooks.md) "
                        """- at '$.share'\n    "share": "fair",\n  """ + " " * (col - 1) + "^\n")


def test_without_the_simulator_an_extension_names_it(tmp_path):
    path = _edit(mm1_ir(tmp_path), lambda d: d["stages"][0].update(kind={"kind": "Extension", "name": "batch"}))
    r = run_serq("check", str(path), env={"SERQ_DISABLED_PLUGINS": "sim"})
    assert r.returncode == 1
    assert "'batch' names a plugin's stage kind, and no installed part registers stage kinds: serq-sim" in r.stderr
    assert r.stderr.splitlines()[0].startswith(_first_line(path, '"batch"', "stage server: "))
    assert r.stderr.splitlines()[0].endswith(" - at '$.stages[0].kind.name'")


def test_an_ir_of_builtin_kinds_still_checks(tmp_path):
    r = run_serq("check", str(mm1_ir(tmp_path)))
    assert r.returncode == 0, r.stderr
