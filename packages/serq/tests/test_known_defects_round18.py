"""Known defects, round 18 (serq).

serq/plugins.py told an async or generator function in two places with two texts: a contract method's check
(call_problem) called an async generator "a coroutine function (async def), which serQ calls … without awaiting
it", and a registration hook's did not look for async generators at all (refused as "it returned an object of
type async_generator: a registration hook calls register(…) … and returns nothing"). One rule now
(serq.plugins.unrun_body) for both, each kind named as it is, in one shape.
"""

from __future__ import annotations

import contextlib
import importlib
import sys

import pytest
from serq import get_plugin_manager
from serq.errors import PluginError
from serq.plugins import call_problem, collect, unrun_body

pytestmark = pytest.mark.timeout(60)


async def _coroutine(job):
    return job


async def _async_generator(job):
    yield job


def _generator(job):
    yield job


def _plain(job):
    return job


@pytest.mark.parametrize("fn, what, thing", [
    (_coroutine, "a coroutine function (async def)", "a coroutine, which nothing awaits"),
    (_async_generator, "an async generator function (an async def that yields)",
     "an async generator, which nothing iterates"),
    (_generator, "a generator function (it yields)", "a generator, which nothing iterates"),
])
def test_each_kind_in_one_shape(fn, what, thing):
    assert unrun_body(fn, "attach(job)") == f"is {what}, whose call as attach(job) returns {thing}, and runs none of " \
                                            "its body"
    # the contract's check says the same after the object's name
    assert call_problem(fn, "attach(job)", shown=False) == unrun_body(fn, "attach(job)")


def test_a_plain_function_is_no_problem():
    assert unrun_body(_plain, "attach(job)") is None and call_problem(_plain, "attach(job)") is None


def test_an_async_generator_method_of_the_contract_is_not_called_a_coroutine_function():
    class Kind:
        async def attach(self, job):
            yield job

    why = call_problem(Kind().attach, "attach(job)", shown=False)
    assert why.startswith("is an async generator function (an async def that yields), whose call as attach(job) ")


@contextlib.contextmanager
def _installed(site):
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(str(site))
        for name in [n for n in sys.modules if n.startswith("acme18_")]:
            del sys.modules[name]


@pytest.mark.parametrize("header, body, what, thing, got", [
    ("async def", "register('k', DelayStage)\n    yield", "an async generator function (an async def that yields)",
     "an async generator, which nothing iterates", "async_generator"),
    ("async def", "register('k', DelayStage)", "a coroutine function (async def)", "a coroutine, which nothing awaits",
     "coroutine"),
])
def test_a_registration_hook_that_is_an_async_generator_is_refused_as_one(tmp_path, header, body, what, thing, got):
    info = tmp_path / "serq_acme-0.3.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: serq-acme\nVersion: 0.3.0\n")
    (info / "entry_points.txt").write_text("[serq]\nacme = acme18_hook\n")
    (tmp_path / "acme18_hook.py").write_text(
        "from serq import hookimpl\nfrom serq_sim.stages import DelayStage\n\n\n@hookimpl\n"
        f"{header} serq_sim_register_stage_kinds(register):\n    {body}\n")
    with _installed(tmp_path), pytest.raises(PluginError) as e:
        collect(get_plugin_manager(), "serq_sim_register_stage_kinds", "stage kind")
    assert str(e.value).splitlines() == [
        "error: plugin 'acme' (from serq-acme 0.3.0) registers a stage kind wrongly in serq_sim_register_stage_kinds: "
        f"it is {what}, whose call as serq_sim_register_stage_kinds(register) returns {thing}, and runs none of its "
        f"body (it returned an object of type {got}): nothing it registers is registered; a registration hook is a "
        "plain function that calls register(name, object)",
        "(run without it: SERQ_DISABLED_PLUGINS=acme, or uninstall serq-acme)"]


# --- an atomic write fsyncs its file; a block of them fsyncs each folder once ------------------------------


def _counting_fsync(monkeypatch) -> list[str]:
    """``os.fsync`` counted: each call's ``"file"`` or ``"dir"``, in order."""
    import os
    import stat

    calls: list[str] = []
    real = os.fsync

    def fsync(fd):
        calls.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return calls


def test_one_write_fsyncs_its_file_and_its_folder(tmp_path, monkeypatch):
    from serq.files import write_atomic

    calls = _counting_fsync(monkeypatch)
    write_atomic(tmp_path / "a.csv", "x\n")
    assert calls == ["file", "dir"] and (tmp_path / "a.csv").read_text() == "x\n"


def test_a_block_of_writes_fsyncs_each_file_and_each_folder_once_at_its_end(tmp_path, monkeypatch):
    from serq.files import folders_synced_once, write_atomic

    (tmp_path / "b").mkdir()
    calls = _counting_fsync(monkeypatch)
    with folders_synced_once():
        for i in range(5):
            write_atomic(tmp_path / f"t{i}.csv", f"{i}\n")
        with folders_synced_once():  # (within the block: the outer one's)
            write_atomic(tmp_path / "b" / "u.csv", "u\n")
        assert calls == ["file"] * 6  # every file whole before the block ends
        assert [p.read_text() for p in sorted(tmp_path.glob("t*.csv"))] == [f"{i}\n" for i in range(5)]
    assert calls == ["file"] * 6 + ["dir", "dir"]  # the two folders, once each


def test_a_block_that_fails_still_fsyncs_the_folders_written(tmp_path, monkeypatch):
    from serq.files import folders_synced_once, write_atomic

    calls = _counting_fsync(monkeypatch)
    with pytest.raises(KeyError), folders_synced_once():
        write_atomic(tmp_path / "a.csv", "a\n")
        raise KeyError("the next table")
    assert calls == ["file", "dir"]
    calls.clear()
    write_atomic(tmp_path / "c.csv", "c\n")  # after the block: as before
    assert calls == ["file", "dir"]
