from __future__ import annotations

import pytest
from serq_ir.report import ObserveStats, PoolStats, StageStats
from serq_report import format_number, render_text


@pytest.mark.parametrize(
    "x, text",
    [
        (0.0, "0"),
        (-0.0, "0"),
        (1.0, "1"),
        (0.25301234567, "0.253012"),
        (123456.7, "123457"),
        (1234567.0, "1.23457e+06"),
        (1e-05, "1e-05"),
        (-2.5, "-2.5"),
        (float("nan"), "nan"),
        (float("inf"), "inf"),
        (float("-inf"), "-inf"),
        (3, "3"),
    ],
)
def test_format_number(x, text):
    assert format_number(x) == text


def stage(name, index, iterations=None):
    return StageStats(
        name=name,
        index=index,
        present=1.0,
        utilisation=0.5,
        completions=3,
        throughput=0.1,
        wait=0.0,
        service=1.0,
        iterations=iterations,
    )


def pool(name, index):
    return PoolStats(
        name=name,
        index=index,
        used=1.0,
        cached=0.0,
        queue=0.0,
        holders=1.0,
        wait=0.0,
        admissions=1,
        evicted_entries=0,
        evicted_units=0.0,
        preemptions=0,
        spills=0,
        rejections=0,
        stuck=0,
    )


def first_column(text, heading):
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(heading + " "))
    rows = []
    for line in lines[start + 1 :]:
        if not line:
            break
        rows.append(line.split()[0])
    return rows


def test_single_stages_and_pools_have_no_index_and_arrays_of_one_keep_theirs(minimal_result):
    # index None: declared without a size (`pool kv`); an index: a member of an array (`pool one[1]`)
    r = minimal_result
    r.stages = [stage("a", None), stage("b", 0), stage("b", 1), stage("b", 2), stage("c", 0)]
    r.pools = [pool("kv", None), pool("reqs", 0), pool("reqs", 1), pool("one", 0)]
    text = render_text(r)
    assert first_column(text, "stage") == ["a", "b[0]", "b[1]", "b[2]", "c[0]"]
    assert first_column(text, "pool") == ["kv", "reqs[0]", "reqs[1]", "one[0]"]


def test_a_label_is_judged_by_the_entry_alone(minimal_result):
    r = minimal_result
    r.stages = [stage("x", 1), stage("y", None)]
    assert first_column(render_text(r), "stage") == ["x[1]", "y"]


def test_iterations_column_only_for_step_stages(minimal_result):
    r = minimal_result
    r.stages = [stage("a", 0)]
    assert "iterations" not in render_text(r)
    r.stages = [stage("a", 0), stage("b", 0, iterations=42)]
    lines = render_text(r).splitlines()
    assert lines[2].split()[-1] == "iterations"
    assert lines[3].split()[-1] == "-"
    assert lines[4].split()[-1] == "42"


def test_empty_tables_are_left_out(minimal_result):
    assert render_text(minimal_result) == (
        "run: horizon 10  end 10  warmup 0  seed 0  events 0  arrivals 0  ended 0  turns 0  mean live 0\n"
    )


def test_interrupted_is_marked_on_the_run_line(minimal_result):
    minimal_result.interrupted = True
    assert render_text(minimal_result).startswith("run: INTERRUPTED  horizon 10  end 10")


def test_columns_are_aligned_and_lines_have_no_trailing_space(result):
    text = render_text(result)
    for line in text.splitlines():
        assert line == line.rstrip()
    table = text.split("\n\n")[1].splitlines()
    # Right-aligned numbers: every row ends its ``count`` cell where the heading does.
    end = table[0].index("count") + len("count")
    for row in table[1:]:
        assert row[end - 1] != " " and row[end] == " "


def test_notes(minimal_result):
    minimal_result.notes = ["one", "note: two", "three\nand more"]
    text = render_text(minimal_result)
    assert text.endswith("\n\nnote: one\nnote: two\nnote: three\n  and more\n")


def test_observe_ci_sign(minimal_result):
    minimal_result.observes = {
        "a": ObserveStats(count=1, mean=1.0, ci=0.5, cv2=0.0, p99=float("nan")),
        "b": ObserveStats(count=0, mean=float("nan"), ci=float("nan"), cv2=float("nan"), p99=float("nan")),
    }
    rows = [line.split() for line in render_text(minimal_result).splitlines()[3:5]]
    assert rows == [["a", "1", "1", "±0.5", "0", "nan", "nan", "nan", "nan"], ["b", "0"] + ["nan"] * 7]


def test_quantile_columns_and_instants(minimal_result):
    minimal_result.observes = {"t": ObserveStats(count=40, mean=2.0, ci=0.1, cv2=0.5, p50=1.5, p90=2.5, p95=3.5,
                                                 p99=4.5)}
    minimal_result.instants = {"first_token": 40, "done": 39}
    lines = render_text(minimal_result).splitlines()
    assert lines[2].split() == ["observe", "count", "mean", "ci", "cv2", "p50", "p90", "p95", "p99"]
    assert lines[3].split() == ["t", "40", "2", "±0.1", "0.5", "1.5", "2.5", "3.5", "4.5"]
    assert lines[4:6] == ["", "instants (samples only): first_token 40  done 39"]


def test_deterministic(report):
    assert render_text(report) == render_text(report)


def test_not_a_report():
    with pytest.raises(TypeError, match="result"):
        render_text(object())
