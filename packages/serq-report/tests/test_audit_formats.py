"""An audit of the report formats with awkward names and values: a name from an IR file may hold any
printable character (Chinese, an emoji, a combining accent, commas and quotes), and the text report, the
CSV files and the JSON report must stay what docs/… and the README promise for them."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
from serq_ir.report import GaugeStats, ObserveStats, Result, StageStats
from serq_report import render_text
from serq_report.csv import write_table

NAN = float("nan")


def _stage(name, index=None):
    return StageStats(name=name, index=index, present=1.0, utilisation=0.5, completions=3, throughput=0.25,
                      wait=0.0, service=2.0)


def _result(**kw):
    return Result(horizon=10.0, end=10.0, warmup=0.0, seed=1, events=5, arrivals=3, ended=3, turns=0,
                  mean_live=1.0, **kw)


def test_a_table_of_wide_and_combining_names_is_aligned_on_the_screen():
    # 服务 takes four columns on a terminal (two wide characters), 'e' + U+0301 one, 🙂 two: each cell is
    # padded to the columns it takes, not to its code points (written out by hand)
    r = _result(stages=[_stage("服务", 0), _stage("e\u0301"), _stage("🙂"), _stage("abcdefgh")])
    text = render_text(r)
    table = text.split("\n\n")[1].rstrip("\n").split("\n")
    assert table == [
        "stage     present  util  completions  throughput  wait  service",
        "服务[0]         1   0.5            3        0.25     0        2",
        "e\u0301               1   0.5            3        0.25     0        2",
        "🙂              1   0.5            3        0.25     0        2",
        "abcdefgh        1   0.5            3        0.25     0        2",
    ]


def test_an_observe_table_of_wide_names_lines_up_its_numbers():
    o = ObserveStats(count=40, mean=1.5, ci=0.25, cv2=1.0, p50=1.0, p90=2.0, p95=3.0, p99=4.0)
    r = _result(observes={"延迟,\"ms\"": o, "x": o}, gauges={"量": GaugeStats(mean=1.0, ci=NAN, min=0.0, max=2.0),
                                                            "long_name": GaugeStats(mean=1.0, ci=NAN, min=0.0,
                                                                                    max=2.0)})
    sections = render_text(r).split("\n\n")
    assert sections[1].split("\n") == [
        "observe    count  mean     ci  cv2  p50  p90  p95  p99",
        "延迟,\"ms\"     40   1.5  ±0.25    1    1    2    3    4",
        "x" + " " * 13 + "40   1.5  ±0.25    1    1    2    3    4",
    ]
    assert sections[2].rstrip("\n").split("\n") == [
        "gauge      mean   ci  min  max",
        "量            1  nan    0    2",
        "long_name     1  nan    0    2",
    ]


def _parse(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text, newline="")))


def test_a_records_file_quotes_a_column_name_as_rfc_4180_says(tmp_path):
    # an IR file's record columns may hold a comma, a quote or a non-ASCII letter: the header quotes them
    # (RFC 4180: a field with a comma or a quote is quoted, a quote doubled), so it has one field a column
    path = tmp_path / "r.csv"
    cols = {"session": np.array([0, 1]), "time": np.array([0.5, 1.0]), 'done,"at"': np.array([1.5, NAN]),
            "名": np.array([2, 3])}
    write_table(path, cols)
    text = path.read_text(encoding="utf-8")
    assert text.split("\n")[0] == 'session,time,"done,""at""",名'
    rows = _parse(text)
    assert rows == [["session", "time", 'done,"at"', "名"], ["0", "0.5", "1.5", "2"], ["1", "1.0", "nan", "3"]]


def test_serq_run_records_of_an_ir_file_with_awkward_columns_reads_back(tmp_path, monkeypatch, capsys):
    import pytest
    import serq_frontend
    import serq_ir
    from serq.cli import main

    prog = serq_frontend.compile(source="""
    stage d : delay;
    workload { arrive batch(2); }
    session { set t0 = now; run d (1 + serial); record req { sent = t0; done = now; } }
    run { horizon 10; warmup 0; }
    """)
    ir = json.loads(serq_ir.encode(prog, spans=False))
    ir["records"][0]["columns"] = ['sent', 'done,"at"\u00e9']
    (tmp_path / "p.ir.json").write_text(json.dumps(ir), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as info:
        main(["run", "p.ir.json", "--no-progress", "--records", "r.csv"])
    assert info.value.code == 0, capsys.readouterr()
    rows = _parse((tmp_path / "r.csv").read_text(encoding="utf-8"))
    assert rows[0] == ["session", "turn", "time", "sent", 'done,"at"\u00e9']
    # batch(2) at 0: session i is done at 1 + i
    assert rows[1:] == [["0", "0", "1.0", "0.0", "1.0"], ["1", "0", "2.0", "0.0", "2.0"]]


AWKWARD = """
stage svc[2] : fifo;
stage one : delay;
pool solo { cap 10; }
gauge g = used(solo);
gauge gnan = 0 / 0;
workload { arrive poisson(0.5); }
session {
  set t0 = now;
  set j = serial % 2;
  hold solo (1) { run svc[j] (~exp(1)); }
  run one (1);
  observe response = now - t0;
  observe zero = 0 * (0 - 1);
  observe big = 1e300 * (now - t0);
  observe tiny = 1e-300 * (now - t0);
  observe infy = 1 / 0;
  observe nanny = 0 / 0;
  branch (serial < 0) { observe never = 1; }
  record req { sent = t0; done = now; weird = 0 / 0; }
  end;
}
run { horizon 600; warmup 20; seed 1; }
"""

#: the names the IR file gives them: wide characters, an emoji, a combining accent, commas and quotes, a pipe and
#: an `=` (not first: a name that begins with =, +, - or @ is refused since 586ae17d, docs/security.md)
RENAME = {"response": '延迟,"ms"', "zero": "café", "big": "e\u0301e\u0301", "tiny": "x" * 60, "infy": "a b",
          "nanny": "🙂", "never": "cmd|=x", "svc": '服务,"q"', "one": "ünï", "solo": "池", "g": "g,1", "gnan": "量",
          "req": 'req,"x"'}


def test_text_json_and_csv_carry_the_same_numbers(tmp_path, monkeypatch, capsys):
    # a run of an IR file with awkward names and values (NaN, inf, -0.0, 1e300, 1e-300, an empty observe): the
    # JSON report is strict JSON (NaN and infinities null, as the README says), every number of the text
    # report is the JSON's as format_number writes it (null: nan, inf or -inf), and each dump file and the
    # records file parse back (RFC 4180) to the JSON's counts and means
    import math

    import pytest
    import serq_frontend
    import serq_ir
    from serq.cli import main
    from serq.files import file_names
    from serq_report import format_number

    ir = json.loads(serq_ir.encode(serq_frontend.compile(source=AWKWARD), spans=False))
    for section in ("observes", "stages", "pools", "gauges", "records"):
        for item in ir.get(section, []):
            item["name"] = RENAME.get(item["name"], item["name"])
    (tmp_path / "p.ir.json").write_text(json.dumps(ir, ensure_ascii=False), encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    def serq(*args):
        with pytest.raises(SystemExit) as info:
            main(["run", "p.ir.json", "--no-progress", *args])
        out = capsys.readouterr()
        assert info.value.code == 0, out.err
        return out.out

    text = serq()
    serq("--dump", "d", "--records", "r.csv", "-o", "report.json", "--json")

    def refuse(token):
        raise AssertionError(f"{token} in the JSON report")

    doc = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"), parse_constant=refuse)

    def shown(v):
        return {"nan", "inf", "-inf"} if v is None else {format_number(v)}

    import re

    tables = {s.split("  ")[0]: s.rstrip("\n").split("\n")[1:] for s in text.split("\n\n")}
    keys = {"observe": ["count", "mean", "ci", "cv2", "p50", "p90", "p95", "p99"],
            "gauge": ["mean", "ci", "min", "max"],
            "stage": ["present", "utilisation", "completions", "throughput", "wait", "service"]}
    for kind, lines in tables.items():
        if kind not in keys:
            continue
        for line in lines:
            name, *cells = re.split(r"\s{2,}", line)
            if kind == "stage":
                entry = next(e for e in doc["stages"]
                             if (e["name"] if e["index"] is None else f"{e['name']}[{e['index']}]") == name)
            else:
                entry = doc[kind + "s"][name]
            for key, cell in zip(keys[kind], cells, strict=True):
                assert cell.removeprefix("±") in shown(entry[key]), (kind, name, key, cell, entry[key])
    assert set(doc["observes"]) == {RENAME[n] for n in ("response", "zero", "big", "tiny", "infy", "nanny",
                                                           "never")}
    files = file_names(list(doc["observes"]))
    for name, o in doc["observes"].items():
        rows = _parse((tmp_path / "d" / f"{files[name]}.csv").read_text(encoding="utf-8"))
        assert rows[0] == ["time", "session", "turn", "value"] and len(rows) - 1 == o["count"]
        values = [float(r[3]) for r in rows[1:]]
        if o["mean"] is not None:
            assert math.fsum(values) / len(values) == o["mean"], name
    zero = RENAME["zero"]
    assert {r[3] for r in _parse((tmp_path / "d" / f"{files[zero]}.csv").read_text(encoding="utf-8"))[1:]} == \
        {"-0.0"}
    rows = _parse((tmp_path / "r.csv").read_text(encoding="utf-8"))
    assert rows[0] == ["session", "turn", "time", "sent", "done", "weird"]
    assert len(rows) - 1 == doc["records"][RENAME["req"]] > 0
    assert {r[5] for r in rows[1:]} == {"nan"}
