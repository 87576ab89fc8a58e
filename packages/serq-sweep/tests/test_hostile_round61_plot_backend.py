"""`serq plot` under an ``MPLBACKEND`` matplotlib has not (a typo, a backend of a package not installed).

matplotlib's first import sets its backend from ``MPLBACKEND`` and raised ``ValueError: Key backend: 'nonsense' is not
a valid value for backend; supported values are [...]``, which ended ``serq plot`` in that traceback, though the plot
is drawn on a figure of its own and saved by its suffix, never through the backend. The import now runs without the
variable and sets the backend from it afterwards as matplotlib does, a name it refuses leaving its default; the
variable itself is as given. Truth: the PNG's signature, and matplotlib's backend where the name is one it has.
Processes of their own: matplotlib reads the variable once a process, at its first import."""

from __future__ import annotations

import os
import subprocess
import sys

import serq_sweep

PROGRAM = ("let rate = 1;\nstage s : fifo;\nworkload { arrive poisson(rate); }\n"
           "session { set t0 = now; run s (0.5); observe y = now - t0; }\nrun { horizon 20; seed 3; }\n")
PNG = b"\x89PNG\r\n\x1a\n"


def _env(tmp_path, backend):
    (tmp_path / "mpl").mkdir(exist_ok=True)
    return {k: v for k, v in os.environ.items() if not k.startswith("MPL")} | {
        "MPLBACKEND": backend, "MPLCONFIGDIR": str(tmp_path / "mpl")}


def test_a_backend_matplotlib_has_not_draws_all_the_same(tmp_path):
    (tmp_path / "p.sq").write_text(PROGRAM)
    serq_sweep.sweep(str(tmp_path / "p.sq"), sets={"rate": [1, 1.5]}, seeds=[1, 2], workers=0, progress=False,
                     out=str(tmp_path / "t.csv"))
    r = subprocess.run([sys.executable, "-m", "serq", "plot", "t.csv", "--x", "rate", "--y", "y.mean", "-o", "f.png"],
                       capture_output=True, text=True, cwd=tmp_path, env=_env(tmp_path, "nonsense"), timeout=300)
    assert (r.returncode, r.stderr, r.stdout) == (0, "", "")
    assert (tmp_path / "f.png").read_bytes().startswith(PNG)


def test_a_backend_it_has_is_set_as_matplotlib_sets_it(tmp_path):
    check = ("import os\n"
             "from serq_sweep import plots\n"
             "plots._figure()\n"
             "import matplotlib\n"
             "print(matplotlib.rcParams['backend'], os.environ['MPLBACKEND'])\n")
    r = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, env=_env(tmp_path, "svg"),
                       timeout=300)
    assert (r.returncode, r.stderr, r.stdout) == (0, "", "svg svg\n")
