"""serq plot --where of a swept definition's body matches its rows by the body's canonical form, as the sweep
told the values of the ``--def`` apart (the body as ``serq fmt`` spaces it, on one line, without comments):
``--where 'service=~exp( 1 )'`` matched no row of a table of ``~exp(1)``, while ``service=~exp(1)`` did. A value
no row holds is refused listing the values there are; a run's own columns and ``program``/``trace`` paths still
match as written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from serq.errors import UserError

SERQ = str(Path(sys.executable).parent / "serq")
ENV = dict(os.environ)

PROGRAM = """def service() = ~exp(1);

let lambda = 0.5;

stage s : fifo;

workload {
  arrive poisson(lambda);
}

session {
  set t0 = now;
  run s (service());
  observe response = now - t0;
}

run { horizon 50; seed 1; }
"""


def _serq(cwd, *args, here=None):
    """``serq ARGS`` in ``cwd``, as a child process; given ``here`` (serq_in_process), serq.cli.main in the
    test's process, in that folder (a test of what is drawn and said, not of the process)."""
    if here is not None:
        with pytest.MonkeyPatch.context() as m:
            m.chdir(cwd)
            return here(*args)
    return subprocess.run([SERQ, *args], cwd=cwd, capture_output=True, text=True, timeout=200, env=ENV,
                          stdin=subprocess.DEVNULL)


def test_selected_matches_a_body_by_its_form():
    pd = pytest.importorskip("pandas")
    from serq_sweep.rows import selected

    frame = pd.DataFrame({"service": ["~exp(1)", "~uniform(1, 2)", "~exp(1)"], "status": ["ok", "ok", "error"],
                          "program": ["a b.sq", "a b.sq", "a b.sq"]})
    for value in ("~exp(1)", "~exp( 1 )", " ~exp(1) ", "~exp(1) // the M/M/1 law"):
        assert selected(frame, {"service": value}).index.tolist() == [0, 2], value
    assert selected(frame, {"service": "~uniform(1,2)"}).index.tolist() == [1]
    # a form no row has: refused, listing the values there are
    with pytest.raises(UserError) as e:
        selected(frame, {"service": "~exp( 2 )"})
    assert str(e.value) == ("error: --where service=~exp( 2 ): no row of the table has service = ~exp( 2 ) (its "
                            "values: ~exp(1), ~uniform(1, 2))")
    # the run's own columns and the paths of program match as written
    with pytest.raises(UserError, match=r"the blanks around 'ok' are part of the value"):
        selected(frame, {"status": " ok"})
    with pytest.raises(UserError, match=r"no row of the table has program = a  b.sq \(its values: a b.sq\)"):
        selected(frame, {"program": "a  b.sq"})


@pytest.mark.timeout(300)
def test_plot_where_of_a_swept_body_written_otherwise(tmp_path, serq_in_process):
    # (the first plot as a child process; the other commands, of what they draw and say, in this process: the
    # first plot's figure is held against the second's)
    (tmp_path / "p.sq").write_text(PROGRAM)
    assert _serq(tmp_path, "fmt", "--check", "p.sq", here=serq_in_process).returncode == 0
    r = _serq(tmp_path, "sweep", "p.sq", "--def", "service=~exp(1)", "--def", "service=~uniform(1, 2)", "--set",
              "lambda=0.2,0.4", "-o", "t.csv", "--workers", "0", "--no-progress", here=serq_in_process)
    assert r.returncode == 0, r.stderr
    for table in ("t.csv", "t.points.csv"):
        for value, drawn in (("~exp(1)", "a.svg"), ("~exp( 1 )", "b.svg"), ("~uniform(1,2)", "c.svg")):
            here = None if (table, value) == ("t.csv", "~exp(1)") else serq_in_process
            r = _serq(tmp_path, "plot", table, "--x", "lambda", "--y", "response.mean", "--where",
                      f"service={value}", "-o", drawn, here=here)
            assert r.returncode == 0, (table, value, r.stderr)
            assert (tmp_path / drawn).stat().st_size > 0
        # ~exp( 1 ) drew the rows ~exp(1) drew: the same figure
        assert (tmp_path / "a.svg").read_bytes() == (tmp_path / "b.svg").read_bytes()
        assert (tmp_path / "a.svg").read_bytes() != (tmp_path / "c.svg").read_bytes()
        for drawn in ("a.svg", "b.svg", "c.svg"):
            (tmp_path / drawn).unlink()
        r = _serq(tmp_path, "plot", table, "--x", "lambda", "--y", "response.mean", "--where", "service=~exp( 2 )",
                  "-o", "d.svg", here=serq_in_process)
        assert (r.returncode, r.stderr) == (1, "error: --where service=~exp( 2 ): no row of the table has service = "
                                               "~exp( 2 ) (its values: ~exp(1), ~uniform(1, 2))\n")
        assert not (tmp_path / "d.svg").exists()
