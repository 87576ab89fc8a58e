"""A run whose plugin manager lacks serq-sim's own plugin says why its built-in kinds are not there.

serq-sim's plugin registers every built-in stage kind and pool policy; switched off by SERQ_DISABLED_PLUGINS
(or left unloaded by SERQ_DISABLE_PLUGIN_AUTOLOAD), a run reached through serq sweep or serq_sim.run said
``stage s: unknown stage kind 'Delay' (registered: )`` of a program that names the built-in ``delay``: no
word of the part, where every other command that needs a switched-off part says it is installed but
disabled, and how to enable it (serq.parts). The message now says so, and its advice, taken, runs.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.timeout(120)

PROGRAM = "stage s : delay;\nworkload { arrive batch(2); }\nsession { run s (1); }\nrun { horizon 10; }\n"


def _program(tmp_path, pm):
    import serq_frontend

    (tmp_path / "p.sq").write_text(PROGRAM)
    return serq_frontend.compile(str(tmp_path / "p.sq"), pm=pm)


def test_a_run_without_serq_sims_plugin_says_it_is_disabled(tmp_path, monkeypatch):
    import serq_sim
    from serq.plugins import get_plugin_manager
    from serq_sim.errors import SimError

    monkeypatch.delenv("SERQ_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", "sim")
    pm = get_plugin_manager()
    program = _program(tmp_path, pm)
    with pytest.raises(SimError) as info:
        serq_sim.run(program, pm=pm, progress=False)
    msg = str(info.value)
    # the kind as the program writes it, `delay`, not the IR's tag 'Delay'
    assert "unknown stage kind `delay` (registered: none); serq-sim registers the built-in ones" in msg, msg
    assert "serq-sim is installed but disabled by SERQ_DISABLED_PLUGINS (take 'sim' out of " \
           "SERQ_DISABLED_PLUGINS to enable it)" in msg, msg
    monkeypatch.setenv("SERQ_DISABLED_PLUGINS", "")  # the advice taken: the run runs
    assert serq_sim.run(program, pm=get_plugin_manager(), progress=False).result.arrivals == 2


def test_a_manager_built_without_it_is_said_so(tmp_path, monkeypatch):
    import serq_frontend.plugin
    import serq_sim
    import serq_sim.plugin
    from serq.plugins import get_plugin_manager
    from serq_sim.errors import SimError

    monkeypatch.delenv("SERQ_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    monkeypatch.delenv("SERQ_DISABLED_PLUGINS", raising=False)
    pm = get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin])
    program = _program(tmp_path, pm)
    with pytest.raises(SimError) as info:
        serq_sim.run(program, pm=pm, progress=False)
    msg = str(info.value)
    assert "the plugin manager the run was given does not have serq-sim's plugin (serq_sim.plugin)" in msg, msg
    assert "install serq-sim" not in msg, msg  # (it is installed: this is it)
    pm = get_plugin_manager(autoload=False, plugins=[serq_frontend.plugin, serq_sim.plugin])
    assert serq_sim.run(program, pm=pm, progress=False).result.arrivals == 2
