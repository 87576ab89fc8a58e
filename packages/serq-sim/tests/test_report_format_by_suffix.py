"""``serq run -o FILE`` without ``--format`` or ``--json`` writes the format FILE's suffix names.

``serq run p.sq -o r.json`` wrote the text report into r.json. The rule (serq_sim.cli.report_format): a
format flag always wins; without one, the suffix of ``-o`` (compared without case) picks the registered
format of that name (serq-report registers ``text``, ``json`` and ``csv``), and any other suffix, or none, is
text.
The expected bytes are those the explicit flag writes to standard output.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.timeout(120)

PROGRAM = ("stage s : delay;\nworkload { arrive batch(3); }\n"
           "session { set t0 = now; run s (1 + serial); observe response = now - t0; }\nrun { horizon 10; }\n")


def _serq(capsys, *args: str) -> str:
    from serq.cli import main

    with pytest.raises(SystemExit) as info:
        main(["run", "p.sq", "--no-progress", *args])
    out = capsys.readouterr()
    assert info.value.code == 0, out.err
    return out.out


@pytest.fixture
def reports(tmp_path, monkeypatch, capsys):
    (tmp_path / "p.sq").write_text(PROGRAM)
    monkeypatch.chdir(tmp_path)
    return {"text": _serq(capsys, "--format", "text"), "json": _serq(capsys, "--json"),
            "csv": _serq(capsys, "--format", "csv")}


@pytest.mark.parametrize("args, fmt", [
    (["-o", "r.json"], "json"),
    (["-o", "R.JSON"], "json"),                      # without case
    (["-o", "out.report.json"], "json"),             # the last suffix
    (["-o", "r.txt"], "text"),
    (["-o", "r.csv"], "csv"),                        # serq-report's CSV report (it was the text report)
    (["-o", "R.CSV"], "csv"),
    (["-o", "r"], "text"),
    (["-o", "json"], "text"),                        # a name, not a suffix
    (["--format", "text", "-o", "r.json"], "text"),  # the flag wins
    (["--json", "-o", "r.txt"], "json"),
    (["--format", "json", "-o", "r.txt"], "json"),
])
def test_the_report_format_follows_the_output_suffix(tmp_path, capsys, reports, args, fmt):
    assert len({reports["json"], reports["text"], reports["csv"]}) == 3
    json.loads(reports["json"])  # (the JSON report is JSON)
    assert _serq(capsys, *args) == ""
    assert (tmp_path / args[-1]).read_text(encoding="utf-8") == reports[fmt]


def test_a_format_named_with_capitals_follows_the_suffix_without_case():
    # the rule compares the suffix with the formats' names without case: a plugin's format HTML is the one
    # -o r.html and -o R.Html name (it was text: the suffix, lowered, was looked up as it was)
    from serq.plugins import Registry
    from serq_sim.cli import report_format

    reporters = Registry("report format")
    for name in ("text", "json", "HTML"):
        reporters.add(name, object(), "a plugin")
    assert [report_format(o, reporters) for o in ("r.html", "R.Html", "r.HTML", "r.htm", "r.json")] == \
        ["HTML", "HTML", "HTML", "text", "json"]
    reporters.add("html", object(), "another plugin")  # two names that differ in case: the lower-case one
    assert report_format("r.HTML", reporters) == "html"
