"""Known defects, round 31, in serq-sweep.

4. ``--find`` assumes a monotone knob: on a curve that crosses the bound several times it reported one
   crossing, and a search whose conditions failed at both ends said nothing of the crossings the range may
   hold (one that held at both ends said the smallest that holds is LO or below, as if no failure lay
   between). Both ends are evaluated first; when they agree, the note says so: no crossing in the range,
   or an even number of them. A search whose ends differ gives one crossing of the curve (docs/sweep.md).

Every figure here is an exact function of the knob: ``y = (x - 2)^2`` over 0..4, one session at t = 0."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from serq_sweep import find

SERQ = str(Path(sys.executable).parent / "serq")

BOWL = """let x = 0;
stage s : delay;
workload { arrive renewal(1); }
session {
  observe y = (x - 2) * (x - 2);
  end;
}
run { horizon 1.5; warmup 0; seed 1; }
"""

#: y = (x - 1)(x - 2)(x - 3): 0 at 1, 2 and 3, negative on (-inf, 1) and (2, 3)
CUBIC = BOWL.replace("(x - 2) * (x - 2)", "(x - 1) * (x - 2) * (x - 3)")


def _search(tmp_path: Path, program: str, cond: str, over: str) -> subprocess.CompletedProcess:
    path = tmp_path / "p.sq"
    path.write_text(program)
    return subprocess.run([SERQ, "sweep", str(path), "--find", cond, "--over", "x", over, "--workers", "0",
                           "--no-progress"], capture_output=True, text=True, timeout=60)


BETWEEN = "no crossing in the range, or an even number of them, where the conditions are not monotone in x: " \
          "the search evaluated the ends alone"


@pytest.mark.timeout(60)
def test_conditions_that_fail_at_both_ends_are_said_to_have_no_crossing_or_an_even_number(tmp_path):
    # (x - 2)^2 <= 1 holds on [1, 3] alone: 4 at both ends, two crossings inside the range
    r = _search(tmp_path, BOWL, "y.mean <= 1", "0:4")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1].split()[1] == "fails_everywhere", r.stdout
    assert r.stderr == (f"note: fails_everywhere: the conditions fail at both ends, x=0 and x=4: {BETWEEN}, so they "
                        "may hold between them (a sweep of the range with --set shows it)\n"), r.stderr


@pytest.mark.timeout(60)
def test_conditions_that_hold_at_both_ends_say_they_may_fail_between(tmp_path):
    # (x - 2)^2 >= 1 fails on (1, 3): 4 at both ends
    r = _search(tmp_path, BOWL, "y.mean >= 1", "0:4")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ("note: holds_everywhere: the conditions hold at both ends, x=0 and x=4: the value reported is "
                        "the top, x=4, the largest that holds; the smallest that holds is x=0 or below (for the "
                        f"fewest, give a LO at which the conditions fail); {BETWEEN}, so they may fail between "
                        "them\n"), r.stderr


@pytest.mark.timeout(60)
def test_ends_that_differ_give_one_crossing_of_several(tmp_path):
    # y <= 0 holds at 0 (y = -6) and fails at 3.5 (y = 1.875); it crosses at 1 (fails after), 2 (holds
    # after) and 3 (fails after). Halvings: 1.75 fails, 0.875 holds, 1.3125 fails, 1.09375 fails, 0.984375
    # holds, 1.0390625 fails (3.5 / 64 wide): the crossing at 1, the one the halvings meet; the found
    # outcome is said without a note (the ends decide the direction)
    path = tmp_path / "p.sq"
    path.write_text(CUBIC)
    _, rows = find(str(path), "y.mean <= 0", ("x", "0:3.5"), workers=0, progress=False)
    (row,) = rows
    assert (row["outcome"], row["holds"], row["fails"], row["evaluations"]) == ("found", 0.984375, 1.0390625, 8), row
    assert row["holds"] < 1 < row["fails"]


@pytest.mark.timeout(60)
def test_a_monotone_search_says_nothing_more(tmp_path):
    r = _search(tmp_path, BOWL, "y.mean <= 1", "1.5:4")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    assert r.stdout.splitlines()[1].split()[1] == "found", r.stdout


# 5. Figure names: `ttft.p50` beside the request metrics resolved to `observes.ttft.p50` alone, though
#    `requests.ttft.median` is the same figure of the other section (a median by its other word), while
#    `ttft.p99` was refused as ambiguous. One rule: a tail names every figure that ends with it, a median's
#    by either word.

#: the columns a program on lib/vllm.sq gives (its observe ttft beside the request metrics)
VLLM_COLUMNS = [f"observes.ttft.{s}" for s in ("count", "mean", "p50", "p90", "p95", "p99")] + [
    f"requests.{m}.{s}" for m in ("ttft", "e2el") for s in ("count", "mean", "median", "p90", "p95", "p99")]


@pytest.mark.parametrize("name, both", [
    ("ttft.p99", "observes.ttft.p99, requests.ttft.p99"),
    ("ttft.p50", "observes.ttft.p50, requests.ttft.median"),
    ("ttft.median", "requests.ttft.median, observes.ttft.p50"),
])
def test_a_tail_that_two_sections_end_with_is_ambiguous_whatever_the_quantile(name, both):
    from serq_sweep.figures import AmbiguousFigure, resolve

    with pytest.raises(AmbiguousFigure) as e:
        resolve(name, VLLM_COLUMNS)
    assert str(e.value).startswith(f"error: figure {name!r} is ambiguous: {both}"), str(e.value)
    if name != "ttft.p99":
        assert str(e.value).endswith("(a median is one figure by either word: a request metric's median is "
                                     "`median`, as vLLM's benchmark names it, and an observe's is `p50`, beside its "
                                     "p90, p95 and p99; name one by its path)"), str(e.value)


@pytest.mark.parametrize("name, column", [
    ("observes.ttft.p50", "observes.ttft.p50"),
    ("requests.ttft.median", "requests.ttft.median"),
    ("e2el.median", "requests.e2el.median"),  # the one median of e2el: no observe of that name
    ("ttft.p90", None),
])
def test_whole_paths_and_tails_of_one_figure_resolve(name, column):
    from serq_sweep.figures import AmbiguousFigure, resolve

    if column is None:
        with pytest.raises(AmbiguousFigure):
            resolve(name, VLLM_COLUMNS)
    else:
        assert resolve(name, VLLM_COLUMNS) == column
    # without the observe, the request metric's median is the one figure by its word
    assert resolve("ttft.median", VLLM_COLUMNS[6:]) == "requests.ttft.median"
    assert resolve("ttft.p50", VLLM_COLUMNS[:6]) == "observes.ttft.p50"


# 6. An empty name given to a flag that takes one was said as no name at all: `serq plot t.csv --x '' --y b`
#    said "error: --x : no column  (…)", `--gauge ''` "no gauge  in the dump", `serq sweep --over '' 0:1`
#    "--over : the program has no `let `". It is told as empty, a usage error, before anything is read.

@pytest.mark.timeout(60)
@pytest.mark.parametrize("flags, said", [
    (["--x", "", "--y", "b"], "--x '': an empty name names no column"),
    (["--x", "a", "--y", ""], "--y '': an empty name names no figure"),
    (["--x", "a", "--y", "b", "--hue", ""], "--hue '': an empty name names no column"),
    (["--x", " ", "--y", "b"], "--x ' ': a blank name names no column"),
    (["--cdf", "a", "--cdf", ""], "--cdf '': an empty name names no observe, metric or column"),
])
def test_serq_plot_tells_an_empty_name_as_empty(tmp_path, serq_in_process, flags, said):
    table = tmp_path / "t.csv"
    table.write_text("a,b\n1,2\n3,4\n")
    if flags[1] == "":  # (the first case as a `serq` child process; the others call serq.cli.main here)
        r = subprocess.run([SERQ, "plot", str(table), "-o", str(tmp_path / "x.svg"), *flags], capture_output=True,
                           text=True, timeout=60)
    else:
        r = serq_in_process("plot", str(table), "-o", str(tmp_path / "x.svg"), *flags)
    assert (r.returncode, r.stderr) == (2, f"error: {said}\n"), r.stderr
    assert not (tmp_path / "x.svg").exists()


@pytest.mark.timeout(60)
def test_serq_plot_tells_an_empty_gauge_as_empty(tmp_path, serq_in_process):
    r = serq_in_process("plot", str(tmp_path), "-o", str(tmp_path / "x.svg"), "--gauge", "")
    assert (r.returncode, r.stderr) == (2, "error: --gauge '': an empty name names no gauge\n"), r.stderr


@pytest.mark.timeout(60)
def test_an_empty_knob_is_told_as_empty(tmp_path):
    (tmp_path / "p.sq").write_text(BOWL)
    r = subprocess.run([SERQ, "sweep", str(tmp_path / "p.sq"), "--find", "y.mean <= 1", "--over", "", "0:4",
                        "--workers", "0", "--no-progress"], capture_output=True, text=True, timeout=60)
    assert (r.returncode, r.stderr) == (2, "error: --over '': an empty name names no let; the knob is a let "
                                           "constant of the program\n"), r.stderr
    from serq.errors import UsageError

    with pytest.raises(UsageError) as e:
        find(str(tmp_path / "p.sq"), "y.mean <= 1", ("", "0:4"), workers=0, progress=False)
    assert str(e.value) == ("error: over=('', …): an empty name names no let; the knob is a let constant of the "
                            "program")
