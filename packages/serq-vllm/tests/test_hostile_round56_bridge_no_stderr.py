"""``python -m serq_vllm.real`` (the bridge to a real vLLM) in a process without standard error (``sys.stderr``
is None: started with descriptor 2 closed): its usage line and its errors were ``print(…, file=sys.stderr)``,
which writes to standard output when ``sys.stderr`` is None, the channel of its JSON answer. They are said as
every serq command says its own (``click.echo(…, err=True)``): on stderr, or nowhere without one; the status
is the same."""

from __future__ import annotations

import sys

from serq_vllm.real import main


def test_the_bridge_says_its_errors_on_stderr_or_nowhere(tmp_path, monkeypatch, capsys):
    missing = str(tmp_path / "nope.json")
    assert main([]) == 2 and main([missing]) == 1
    said = capsys.readouterr()
    assert said.out == "" and said.err.startswith("usage: python -m serq_vllm.real SCENARIO.json"), said
    assert "nope.json" in said.err.splitlines()[1], said.err
    monkeypatch.setattr(sys, "stderr", None)
    assert main([]) == 2 and main([missing]) == 1
    monkeypatch.undo()
    assert capsys.readouterr() == ("", "")
