"""``serq plot --y`` of a flag figure (``interrupted``) of a sweep's runs table draws it as 0 and 1, as the sweep's
points table averages it (``interrupted:mean``, docs/sweep.md) and as ``serq compare`` and ``--find`` take it: it
was refused, "column interrupted does not hold numbers (it has False)", while the same figure of the points
table of the same sweep was drawn. A column of words is still refused, and a frame given is not changed."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from serq.cli import main
from serq_sweep.plots import curve_data

TABLE = ("point,a,seed,status,message,key,interrupted,w.mean\n"
         "0,1,1,ok,,k01,False,0.5\n0,1,2,ok,,k02,True,0.5\n"
         "1,2,1,ok,,k11,False,0.7\n1,2,2,ok,,k12,False,0.7\n"
         "2,3,1,ok,,k21,True,0.9\n2,3,2,partial,,k22,,0.9\n")


@pytest.fixture
def here(tmp_path, monkeypatch):
    (tmp_path / "t.csv").write_text(TABLE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_flag_is_drawn_as_0_and_1(here):
    fig, lines = curve_data(str(here / "t.csv"), "a", "interrupted")
    xs, means, cis = lines[None]
    assert fig == "interrupted" and xs == [1.0, 2.0, 3.0]
    assert means == [0.5, 0.0, 1.0]  # (0 + 1) / 2; (0 + 0) / 2; the one run with a value
    assert cis[1] == 0.0 and math.isnan(cis[2])  # two equal values; one value has no CI
    # t(1) = tan(0.475 pi) = 12.7062 times the standard error of 0 and 1 (sd 1/sqrt(2), over sqrt(2))
    assert cis[0] == pytest.approx(math.tan(0.475 * math.pi) * 0.5, rel=1e-12)


def test_the_command_draws_it(here, capsys):
    with pytest.raises(SystemExit) as info:
        main(["plot", "t.csv", "--x", "a", "--y", "interrupted", "-o", "o.svg"])
    err = capsys.readouterr().err
    assert info.value.code == 0, err
    # the one run of a = 3 with a value is its mean, and the plot says so (test_peer_programs_round29_plot_thin_means)
    assert err.endswith("drawn over the others': a=3 over 1 of 2 runs\n"), err
    assert (here / "o.svg").stat().st_size > 0


def test_a_frame_given_is_not_changed(here):
    frame = pd.DataFrame({"point": [0, 1], "a": [1, 2], "seed": [1, 1], "status": ["ok", "ok"], "message": ["", ""],
                          "key": ["k0", "k1"], "interrupted": [False, True]})
    _, lines = curve_data(frame, "a", "interrupted")
    assert lines[None][1] == [0.0, 1.0]
    assert frame["interrupted"].dtype == bool


def test_a_column_of_words_is_still_refused(here, capsys):
    (here / "t.csv").write_text(TABLE.replace("True", "yes").replace("False", "no"))
    with pytest.raises(SystemExit) as info:
        main(["plot", "t.csv", "--x", "a", "--y", "interrupted", "-o", "o.svg"])
    assert info.value.code == 1
    assert "column interrupted does not hold numbers (it has 'no')" in capsys.readouterr().err


def test_an_output_in_a_missing_folder_is_refused_before_the_source_is_read(here, capsys, monkeypatch):
    # -o of a folder that does not exist is serq run's message, said before the source is read or drawn: it
    # failed after the drawing, 'cannot create a file in its folder nope (No such file or directory); …'
    import serq_sweep.plots as plots

    def read(*a, **k):
        raise AssertionError("the source was read")

    monkeypatch.setattr(plots, "curve", read)  # (what plot() reads and draws a table with)
    with pytest.raises(SystemExit) as info:
        main(["plot", "t.csv", "--x", "a", "--y", "interrupted", "-o", "nope/o.svg"])
    assert (info.value.code, capsys.readouterr().err) == (1, "error: nope/o.svg: no folder nope to write it in\n")
    assert not (here / "nope").exists()
