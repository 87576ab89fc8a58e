"""``serq plot DIR --cdf OBSERVE`` of a dump says, in one warning line an observe, how many samples are NaN
(left out) and how many ``inf`` or ``-inf`` (counted, drawn nowhere: the curve ends below 1 and starts above
0 by their shares), in the words of a records CDF's: both went without a word."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

from serq_sweep import plots

MMC = Path(__file__).parent / "peer_programs27" / "mmc.sq"


def _dump(tmp_path, values):
    r = subprocess.run([sys.executable, "-m", "serq", "run", str(MMC), "--horizon", "2", "--warmup", "0", "--dump",
                        "d"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    path = tmp_path / "d" / "response.csv"
    path.write_text("time,session,turn,value\n" + "".join(f"{i},{i},0,{v}\n" for i, v in enumerate(values)))
    return tmp_path / "d", path


def test_nan_and_infinite_samples_are_said(tmp_path, capsys):
    folder, path = _dump(tmp_path, ["1", "nan", "2", "inf", "3"])
    fig = plots.plot(str(folder), cdf_of=["response"])
    assert capsys.readouterr().err == (
        f"warning: {path}: --cdf response: 1 of the 5 samples are nan and are left out; the samples hold 1 inf, "
        "counted among them and drawn nowhere (beyond the axis: the curve ends below 1 by the share of inf)\n")
    (line,) = fig.axes[0].lines
    assert line.get_label() == "response (4 samples)"
    # by hand: 1, 2, 3, inf of 4 samples: the steps at 1/4, 2/4, 3/4
    assert [(x, y) for x, y in line.get_xydata().tolist() if math.isfinite(x)] == [(1.0, 0.25), (2.0, 0.5),
                                                                                  (3.0, 0.75)]


def test_minus_inf_alone_and_a_clean_dump(tmp_path, capsys):
    folder, path = _dump(tmp_path, ["-inf", "1", "2"])
    plots.plot(str(folder), cdf_of=["response"])
    assert capsys.readouterr().err == (
        f"warning: {path}: --cdf response: the samples hold 1 -inf, counted among them and drawn nowhere (beyond "
        "the axis: the curve starts above 0 by the share of -inf)\n")
    path.write_text("time,session,turn,value\n0,0,0,1\n1,1,0,2\n")
    plots.plot(str(folder), cdf_of=["response"])
    assert capsys.readouterr().err == ""
