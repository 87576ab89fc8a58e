"""``serq sweep --find``, ``serq compare`` and ``serq sweep --show`` say when runs were cut short.

A run stopped by ``--max-events`` or ``--max-wall`` is partial (its row's status): its figures cover only
the time simulated before the bound. The search judged its conditions on them, the comparison compared
them and ``--show`` averaged them as any other, and said nothing. Each now writes one warning on stderr
naming how many runs were cut short and by which bound (serq_sweep.core.cut_short); the result is as it
was (the bound is what the user asked for). The sweep's own table says it per run already (status).
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(120)

# batch(n) starts n sessions at once, each one event at least: n = 50 passes 40 events, n = 2 (a handful of
# events per session) does not; the work a draw, so that the seeds differ (a program whose every seed runs the
# same run has a note of its own, serq_sweep.alike)
PROGRAM = ("let n = 2;\nstage s : delay;\nworkload { arrive batch(n); }\n"
           "session { set t0 = now; run s (~exp(1)); observe response = now - t0; }\nrun { horizon 100; }\n")
TAIL = ("(status partial: their figures cover only the time simulated before the bound); {} on their figures all "
        "the same\n")


def _serq(capsys, *args: str) -> tuple[int, str, str]:
    from serq.cli import main

    with pytest.raises(SystemExit) as info:
        main([*args, "--workers", "0", "--no-progress"])
    out = capsys.readouterr()
    return info.value.code, out.out, out.err


@pytest.fixture(autouse=True)
def _here(tmp_path, monkeypatch):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)


def test_compare_says_how_many_runs_were_cut_short(capsys):
    code, out, err = _serq(capsys, "compare", "p.sq", "--set", "n=2,50", "--seeds", "1..2", "--max-events", "40",
                           "--figure", "arrivals")
    assert code == 0 and "paired over 2 seeds" in out, err
    # the arm n=50, at both seeds: 2 of the 4 runs
    assert err == "warning: 2 of 4 run(s) were cut short by --max-events " + TAIL.format("the comparison was made")


def test_find_says_how_many_runs_its_conditions_were_judged_on_were_cut_short(capsys):
    code, out, err = _serq(capsys, "sweep", "p.sq", "--find", "arrivals >= 1", "--over", "n", "2:50",
                           "--seeds", "1..2", "--max-events", "40")
    assert code == 0 and "holds_everywhere" in out, err
    # both ends, n=2 and n=50, at 2 seeds: the n=50 runs were cut short
    assert err == ("warning: 2 of 4 run(s) were cut short by --max-events "
                   + TAIL.format("the conditions of --find were judged") + EVERYWHERE.format(2, 50))


def test_show_says_how_many_runs_its_means_took_were_cut_short(capsys):
    code, out, err = _serq(capsys, "sweep", "p.sq", "--set", "n=50", "--seeds", "1..3", "--max-events", "40",
                           "--show", "arrivals")
    assert code == 0 and out.splitlines()[1].split()[:2] == ["50", "3"], out
    assert err == ("warning: 3 of 3 run(s) were cut short by --max-events "
                   + TAIL.format("the means and CIs of --show were taken"))


# what a search that holds at both ends says of its value (docs/sweep.md), whole runs or not
EVERYWHERE = ("note: holds_everywhere: the conditions hold at both ends, n={0} and n={1}: the value reported is the "
              "top, n={1}, the largest that holds; the smallest that holds is n={0} or below (for the fewest, give a "
              "LO at which the conditions fail); no crossing in the range, or an even number of them, where the "
              "conditions are not monotone in n: the search evaluated the ends alone, so they may fail between them\n")


def test_nothing_is_said_of_whole_runs(capsys):
    for args, said in ((["compare", "p.sq", "--set", "n=2,3", "--seeds", "1..2", "--figure", "arrivals"], ""),
                       (["sweep", "p.sq", "--find", "arrivals >= 1", "--over", "n", "2:3", "--seeds", "1..2"],
                        EVERYWHERE.format(2, 3)),
                       (["sweep", "p.sq", "--set", "n=2", "--show", "arrivals", "--max-events", "1000"], "")):
        code, _, err = _serq(capsys, *args)
        assert (code, err) == (0, said), (args, err)


def test_runs_cut_short_by_the_samples_bound_name_it_in_words():
    # the sweep's runs are bounded in samples too (serq run's default, or --max-samples / max_samples=, a flag
    # of the sweep's as of serq run's): the warning names the flag, as it names --max-events
    from serq_sweep.core import cut_short

    warning = cut_short([{"status": "partial", "message": "max-samples"}, {"status": "ok", "message": ""}],
                        "the comparison was made")
    assert warning.startswith("warning: 1 of 2 run(s) were cut short by --max-samples (status partial"), warning
