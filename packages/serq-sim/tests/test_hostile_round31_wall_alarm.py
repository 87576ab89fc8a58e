"""--max-wall's alarm (serq_sim.engine._wall_in_plugins) against a third party's code that does not let it
stop the run: a stage kind that catches the stop (``except BaseException``) and works on, and one whose
``attach`` runs simulations of its own (serq_sim.run inside the run). The run stops near its bound, with its
own note; a simulation inside it keeps its own bound and note; and the alarm is off and SIGALRM's handler the
default again after every run. A SIGALRM handler or alarm of the program's own is left alone, and so is a
handler set outside Python (``signal.getsignal`` None), which ``signal.signal`` cannot put back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
import serq_frontend
import serq_sim
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)

KINDS = '''import os
import sys
import time

import serq_frontend
import serq_sim
from serq import hookimpl
from serq.plugins import get_plugin_manager
from serq_sim.stages import StageKind

#: set by the test: the inner runs' bound (None: none), how many a job runs; what they ended as
INNER_WALL = float(os.environ["ACME31_INNER_WALL"]) if os.environ.get("ACME31_INNER_WALL") else None
INNER_RUNS = 2
INNER = []

INNER_PROGRAM = """stage d : delay;
workload { arrive poisson(1); }
session { run d (1); }
run { horizon 1e12; }
"""


class Forever(StageKind):
    def attach(self, job):
        self.acc()
        self.present += 1
        job.stage = self

    def detach(self, job):
        self.acc()
        self.present -= 1
        job.stage = None


class Swallow(Forever):
    """Works 20 x 0.5 s on its job, going on after anything that interrupts a piece of it."""

    def attach(self, job):
        super().attach(job)
        for _ in range(20):
            try:
                time.sleep(0.5)
            except BaseException:
                pass


class Work(Forever):
    """Works 1 s on its job, in pieces of 0.1 s."""

    def attach(self, job):
        super().attach(job)
        for _ in range(10):
            time.sleep(0.1)


class Nested(Forever):
    """Runs INNER_RUNS simulations of its own for each job, keeping how each ended."""

    def attach(self, job):
        super().attach(job)
        pm = get_plugin_manager()
        prog = serq_frontend.compile(source=INNER_PROGRAM, pm=pm)
        for _ in range(INNER_RUNS):
            print("inner run", file=sys.stderr, flush=True)
            rep = serq_sim.run(prog, pm=pm, seed=1, max_wall=INNER_WALL)
            INNER.append((rep.result.partial, [n for n in rep.result.notes if "wall time" in n]))


@hookimpl
def serq_sim_register_stage_kinds(register):
    register("swallow", Swallow)
    register("nested", Nested)
    register("work", Work)
    register("forever", Forever)
'''


@pytest.fixture
def kinds(tmp_path, monkeypatch):
    """serq-acme31's plugin ``acme31`` installed in a folder on sys.path: its module and a plugin manager."""
    info = tmp_path / "serq_acme31-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme31\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme31 = acme31_kinds\n")
    (tmp_path / "acme31_kinds.py").write_text(KINDS)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = set(sys.modules)
    pm = get_plugin_manager()
    yield sys.modules["acme31_kinds"], pm
    for name in set(sys.modules) - before:
        if name.startswith("acme31_"):
            del sys.modules[name]


def _outer(kind: str) -> str:
    return f"stage s : @{kind};\nworkload {{ arrive batch(1); }}\nsession {{ run s (1); }}\nrun {{ horizon 10; }}\n"


def _run(pm, kind: str, max_wall):
    t0 = time.monotonic()
    report = serq_sim.run(serq_frontend.compile(source=_outer(kind), pm=pm), pm=pm, seed=1, max_wall=max_wall)
    spent = time.monotonic() - t0
    # the alarm is off and the handler the default again: nothing of the run's is left to fire later
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
    return report.result, spent


def test_a_kind_that_catches_the_stop_and_works_on_is_stopped_again(kinds):
    """The kind works 10 s (20 pieces of 0.5 s), catching whatever interrupts a piece: the alarm's stop at
    0.3 s was caught, and the run went on for the whole 10 s (9.8 s of wall time under --max-wall 0.3). The
    alarm fires again until the run is over: each piece left is cut short (10 ms), and the run ends well
    before (about 0.5 s)."""
    _mod, pm = kinds
    result, spent = _run(pm, "swallow", 0.3)
    assert result.partial == "max-wall", result.notes
    assert spent < 4, spent


@pytest.mark.parametrize("tier", ["default", "general"])
def test_the_alarm_stops_the_run_whose_plugin_runs_a_simulation(kinds, monkeypatch, tier):
    """The kind runs two simulations of its own for its job, each under a bound of 3 s (horizon 1e12 of a
    Poisson stream: it would run for hours). The outer run's alarm at 0.3 s found the plugin's frame under
    the inner run's code and raised there: the inner run took the stop for its own (its report partial,
    its note '--max-wall 0.3', a bound it never had), and the outer went on to the second inner run, 3 s
    more (6 s without the inner bound: until killed). Now the stop passes through the inner run to the
    outer one, whose note names the plugin; no inner run ends, on either tier of the inner program."""
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    mod, pm = kinds
    mod.INNER_WALL = 3.0
    result, spent = _run(pm, "nested", 0.3)
    assert result.partial == "max-wall", result.notes
    assert spent < 2.5, spent
    note = next(n for n in result.notes if "wall time" in n)
    assert "(--max-wall 0.3) within the code of plugin 'acme31' (from serq-acme31 0.1.0): Nested.attach at " in note
    assert mod.INNER == []


def test_a_simulation_inside_an_unbounded_run_keeps_its_own_bound_and_note(kinds):
    """The outer run has no bound; each inner run has 0.2 s and sets the alarm itself. The plugin's code that
    called it is not running in it (its frame is below the inner run's): the note is the inner run's own,
    which names no plugin, and the outer run ends at its horizon, the job still at the kind that never
    completes it."""
    mod, pm = kinds
    mod.INNER_WALL = 0.2
    result, spent = _run(pm, "nested", None)
    assert result.partial is None and result.end == 10, result.notes
    assert [p for p, _notes in mod.INNER] == ["max-wall", "max-wall"]
    for _p, notes in mod.INNER:
        assert len(notes) == 1 and "(--max-wall 0.2)" in notes[0] and "within the code" not in notes[0], notes
    assert spent < 5, spent


def test_inner_runs_bounded_below_the_outer_bound_end_and_the_outer_run_completes(kinds):
    """Outer bound 3 s, inner bounds 0.2 s (twice: 0.4 s in all): each inner run stops at its own bound
    with its own note, and the outer run, inside its bound, is complete."""
    mod, pm = kinds
    mod.INNER_WALL = 0.2
    result, spent = _run(pm, "nested", 3.0)
    assert result.partial is None and result.end == 10, result.notes
    assert [p for p, _notes in mod.INNER] == ["max-wall", "max-wall"]
    assert all("(--max-wall 0.2)" in notes[0] for _p, notes in mod.INNER), mod.INNER
    assert spent < 2.5, spent


def test_the_programs_own_handler_and_alarm_are_left_alone(kinds):
    """The program has a SIGALRM handler and an alarm 30 s away: the run sets neither (its plugin's second of
    work is not cut at the bound; the countdown stops the run after it), and they are the program's after it."""
    _mod, pm = kinds
    fired = []

    def own(signum, frame):
        fired.append(signum)

    old = signal.signal(signal.SIGALRM, own)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        t0 = time.monotonic()
        report = serq_sim.run(serq_frontend.compile(source=_outer("work"), pm=pm), pm=pm, seed=1, max_wall=0.3)
        spent = time.monotonic() - t0
        left = signal.getitimer(signal.ITIMER_REAL)[0]
        assert signal.getsignal(signal.SIGALRM) is own
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert report.result.partial == "max-wall" and spent >= 1.0, (report.result.notes, spent)
    assert 30.0 - spent - 1.0 < left <= 30.0 - spent, left
    assert fired == []


def test_a_handler_set_outside_python_is_left_alone(kinds, monkeypatch):
    """signal.getsignal gives None for a handler not set from Python (an embedding program's, set before
    Python started): the run took it for no handler, set its own, and at its end would put back None, which
    signal.signal refuses (a TypeError out of the run). It sets none."""
    _mod, pm = kinds
    calls = []
    real = signal.signal

    def recorded(signum, handler):
        calls.append(signum)
        return real(signum, handler)

    monkeypatch.setattr(signal, "getsignal", lambda signum: None)
    monkeypatch.setattr(signal, "signal", recorded)
    report = serq_sim.run(serq_frontend.compile(source=_outer("work"), pm=pm), pm=pm, seed=1, max_wall=0.3)
    assert signal.SIGALRM not in calls
    assert report.result.partial == "max-wall", report.result.notes


@pytest.mark.parametrize("tier", ["default", "general"])
def test_ctrl_c_in_a_simulation_a_plugin_runs_stops_the_outer_run(kinds, monkeypatch, tier):
    """Ctrl-C (a KeyboardInterrupt, here raised by the program's own SIGALRM handler at 0.3 s) while the
    kind's first inner run (bound 1 s) runs: the inner run took it for its own, made its partial report and
    returned it to the plugin, whose second inner run went on; the outer run ended complete, the interrupt
    gone. Now it passes through the inner run to the outer one, whose report is the interrupted one."""
    if tier == "general":
        monkeypatch.setenv("SERQ_SIM_TIER", "general")
    mod, pm = kinds
    mod.INNER_WALL = 1.0

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        t0 = time.monotonic()
        report = serq_sim.run(serq_frontend.compile(source=_outer("nested"), pm=pm), pm=pm, seed=1)
        spent = time.monotonic() - t0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert report.result.partial == "interrupted", report.result.notes
    assert mod.INNER == []
    assert spent < 0.9, spent


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_serq_run_stopped_by_a_signal_in_a_plugins_simulation(kinds, tmp_path, signum):
    """serq run of the kind whose inner runs have no bound (horizon 1e12: hours each), stopped by Ctrl-C or
    SIGTERM in the first one: the inner run took the signal, the command acknowledged it (a repeated one
    ignored), and the second inner run went on: only SIGKILL ended the command. Now the partial report of
    the outer run, its note naming the plugin, and 130 or 143."""
    src = tmp_path / "outer.sq"
    src.write_text(_outer("nested"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]), "ACME31_INNER_WALL": ""}
    serq = os.path.join(os.path.dirname(sys.executable), "serq")
    proc = subprocess.Popen([serq, "run", str(src), "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, text=True)
    try:
        assert proc.stderr.readline() == "inner run\n"
        time.sleep(0.3)
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
        proc.wait()
    assert proc.returncode == {signal.SIGINT: 130, signal.SIGTERM: 143}[signum], err
    assert "Traceback" not in err, err
    assert "inner run" not in err, err  # (the second inner run never started)
    word = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated (SIGTERM)"}[signum]
    assert f"note: {word} at {src}:3:11, session 0 " in out, out  # (the outer program's run statement)
    assert "(in plugin 'acme31' (from serq-acme31 0.1.0): Nested.attach at " in out, out


def test_a_bound_beyond_what_an_alarm_takes(kinds):
    """--max-wall 1e20 (or 1e300) of a plugin's program: setitimer refuses a time past the platform's time_t,
    and the run ended in OverflowError, a traceback. The bound is reached by alarms one after another; this
    run ends at its horizon long before it."""
    _mod, pm = kinds
    for bound in (1e20, 1e300):
        result, _spent = _run(pm, "forever", bound)
        assert result.partial is None and result.end == 10, result.notes


def test_alarms_one_after_another_stop_at_the_bound_not_before(kinds, monkeypatch):
    """Alarms of at most 0.05 s under a bound of 0.3 s: those before the bound find the plugin's code
    running (its second of sleeps) and set the next one; the one at the bound stops the run there."""
    import serq.plugins

    monkeypatch.setattr(serq.plugins, "ALARM_MOST", 0.05)  # (the one alarm of --max-wall, serq.plugins.plugin_alarm)
    _mod, pm = kinds
    result, spent = _run(pm, "work", 0.3)
    assert result.partial == "max-wall", result.notes
    note = next(n for n in result.notes if "wall time" in n)
    assert "(--max-wall 0.3) within the code of plugin 'acme31' (from serq-acme31 0.1.0): Work.attach at " in note
    assert float(note.split("stopped after ")[1].split(" s ")[0]) >= 0.3, note
    assert 0.3 <= spent < 0.9, spent


def test_a_signal_as_the_alarm_is_put_away_sets_no_other(kinds):
    """A SIGALRM that comes while the run disarms its timer runs the run's handler there (signal.signal runs
    pending handlers before it replaces one), after the timer is off: the handler set the alarm again, the
    default action was put back, and the alarm ended the process ("Alarm clock"). A handler that runs once the
    alarm is being put away sets nothing."""
    from serq_sim.engine import _wall_in_plugins

    _mod, pm = kinds

    class Run:
        max_wall = 100.0
        plugin_manager = pm
        t_wall0 = time.monotonic()

    try:
        with _wall_in_plugins(Run()):
            handler = signal.getsignal(signal.SIGALRM)
            assert callable(handler) and signal.getitimer(signal.ITIMER_REAL)[0] > 90
        assert signal.getsignal(signal.SIGALRM) is signal.SIG_DFL
        handler(signal.SIGALRM, sys._getframe())  # (the signal that came meanwhile)
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
