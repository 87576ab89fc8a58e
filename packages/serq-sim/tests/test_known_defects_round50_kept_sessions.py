"""A third party's stage kind (or policy) that keeps a session it was handed and changes it at a later call is
the plugin's failure, named, with the time and the session: no traceback. The change within the call that
hands the session over is refused when the call returns (test_hostile_round53_plugin_sessions.py); one made
later, to a session that is no longer the job's at hand, was not: the session's compiled code raised
``TypeError: must be real number, not str`` from ``math.fmod`` where it read the attribute, a traceback of
serQ's internals naming no plugin, from ``serq run`` too (serq_sim.guards.kept_session_failure).

The program: session s runs d (s) and then svc (1); s0 leaves svc at 1 and the kind keeps it; s1 arrives at
svc at 1 and the kind sets s0's x to 'abc' then; s0, at d (5) until 6, reads x % 3 at 6."""

from __future__ import annotations

import sys

import pytest
import serq_frontend
import serq_sim
from serq import hookimpl
from serq.errors import PluginError
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

pytestmark = pytest.mark.timeout(60)

PROGRAM = """stage svc : @keeping;
stage d : delay;

workload {
  arrive batch(3);
}

session {
  set x = serial;
  run d (serial);
  run svc (1);
  run d (5);
  observe t = x % 3;
}

run { horizon 20; seed 1; }
"""

KIND = '''
class Keeping(StageKind):
    kept = None
    changed = False
    value = "abc"

    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self
        if self.kept is not None and not self.changed:
            self.changed = True
            x = [a.name for a in self.sim.program.attributes].index("x")
            if self.value == "cut":
                del self.kept.attrs[:]
            else:
                self.kept.attrs[x] = self.value
        self.sim.at(self.sim.now + 1, self.finish, job)

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None

    def finish(self, job):
        if job.stage is not self:
            return
        self.acc()
        self.present -= 1
        job.stage = None
        self.kept = job.owner
        self.sim.job_done(self, job)
'''

_ns = {"StageKind": StageKind}
exec(KIND, _ns)  # noqa: S102 - the same class in process and in the installed plugin below
Keeping = _ns["Keeping"]


class Plugin:
    def __init__(self, value):
        self.value = value

    @hookimpl
    def serq_sim_register_stage_kinds(self, register):
        def build(sim, node, member, flat):
            st = Keeping(sim, node, member, flat)
            st.value = self.value
            return st

        register("keeping", build)


def _refused(value, monkeypatch) -> list[str]:
    out = []
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        pm = get_plugin_manager(plugins=[Plugin(value)])
        with pytest.raises(PluginError) as e:
            serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)
        out.append(str(e.value))
    assert out[0] == out[1]
    return out[0].splitlines()


TAIL = ["<source>:1:1: note: stage svc is declared here",
        "  stage svc : @keeping;",
        "  ^",
        "<source>:13:3: note: the session read it here",
        "    observe t = x % 3;",
        "    ^"]


@pytest.mark.parametrize(("value", "what"), [
    ("abc", "set the attribute x of session 0 to 'abc', not a number"),
    (None, "set the attribute x of session 0 to None, not a number"),
    ("cut", "left the session's attributes session.attrs with 0 value(s), where the program has 5"),
])
def test_a_kept_session_changed_later_is_the_plugins_failure(value, what, monkeypatch):
    lines = _refused(value, monkeypatch)
    head = lines[0]
    assert head.startswith("error: plugin '") and ".Plugin' failed in its stage svc: " in head, head
    assert what in head, head
    assert head.endswith("(a session it kept from an earlier call, read again once that call had returned) "
                         "(at t=6, session 0)"), head
    assert lines[2:] == TAIL


def test_a_number_set_in_a_kept_session_runs(monkeypatch):
    """An int set in place is a number the session's code reads as it is (7 % 3 = 1): the run goes on, s0's t
    1, s1's 1 and s2's 2."""
    for tier in ("", "general"):
        monkeypatch.setenv("SERQ_SIM_TIER", tier)
        pm = get_plugin_manager(plugins=[Plugin(7)])
        r = serq_sim.run(serq_frontend.compile(source=PROGRAM, pm=pm), pm=pm)
        assert sorted(r.observe("t").values.tolist()) == [1.0, 1.0, 2.0]


def test_serq_run_says_it_in_one_message(tmp_path, monkeypatch, serq_in_process):
    info = tmp_path / "serq_keeping-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-keeping\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nkeeping = r50_keeping\n")
    (tmp_path / "r50_keeping.py").write_text(
        "from serq import hookimpl\nfrom serq_sim.stages import StageKind\n" + KIND
        + "\n\n@hookimpl\ndef serq_sim_register_stage_kinds(register):\n    register('keeping', Keeping)\n")
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    try:
        for tier in ("", "general"):
            monkeypatch.setenv("SERQ_SIM_TIER", tier)
            r = serq_in_process("run", "p.sq", "--no-progress", "-o", "out.json")
            assert (r.returncode, r.stdout) == (1, "")
            assert "Traceback" not in r.stderr
            assert r.stderr == (
                "error: plugin 'keeping' (from serq-keeping 0.1.0) failed in its stage svc: set the attribute x of "
                "session 0 to 'abc', not a number: a kind or a policy reads session.attrs, and may set one "
                "to a number in place (a session it kept from an earlier call, read again once that call had "
                "returned) (at t=6, session 0)\n"
                "(run without it: SERQ_DISABLED_PLUGINS=keeping, or uninstall serq-keeping)\n"
                "p.sq:1:1: note: stage svc is declared here\n"
                "  stage svc : @keeping;\n"
                "  ^\n"
                "p.sq:13:3: note: the session read it here\n"
                "    observe t = x % 3;\n"
                "    ^\n")
            assert not (tmp_path / "out.json").exists()
    finally:
        sys.modules.pop("r50_keeping", None)
