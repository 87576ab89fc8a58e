"""A plugin's loader is held to what an IR file is: the program it returns must be the IR's (its schema and
its references), as ``serq_ir.load`` holds a file to. Before, only its class was checked: ``serq check`` said
``OK`` of a program whose session was None (or whose version was 999, or that ran a stage it does not
have), and ``serq run`` failed inside the simulator. It is one message naming the plugin and the fault's
JSON path."""

from __future__ import annotations

import pytest
from serq import hookimpl
from serq.errors import PluginError
from serq.loading import load_program
from serq.plugins import get_plugin_manager

pytestmark = pytest.mark.timeout(60)


def _program(case: str):
    from serq_ir import nodes as n

    attrs = [n.Attribute(name=a, builtin=True) for a in n.BUILTIN_ATTRIBUTES]
    session = {"none": None, "stage 3": [n.Run(stages=[n.StageRef(stage=3)], work=n.Num(value=1.0))]}.get(
        case, [n.Run(stages=[n.StageRef(stage=0)], work=n.Num(value=1.0))])
    return n.Program(version=999 if case == "version" else n.IR_VERSION, attributes=attrs,
                     stages=[n.Stage(name="s", kind=n.Fifo())], workload=n.Workload(arrive=n.Batch(n=1)),
                     session=session, run=n.RunSettings(horizon=10.0))


class Loader:
    """Loads ``.r15`` files: the file's text names the case."""

    @hookimpl
    def serq_register_loaders(self, register):
        register(".r15", lambda path, options: _program(path.read_text().strip()))


@pytest.mark.parametrize(("case", "fault"), [
    ("none", "a list is wanted, not null - at '$.session'"),
    ("version", "IR version 999 is not supported (this serq-ir reads version 2) - at '$.version'"),
    ("stage 3", "stage 3 does not exist (the program has 1) - at '$.session[0].stages[0].stage'"),
])
def test_a_loader_whose_program_is_not_the_irs_is_named(tmp_path, case, fault):
    path = tmp_path / "p.r15"
    path.write_text(case)
    pm = get_plugin_manager(plugins=[Loader()])
    with pytest.raises(PluginError) as e:
        load_program(pm, path)
    assert str(e.value).splitlines()[0] == (
        f"error: plugin '{__name__}.Loader' failed in its loader for .r15 files: it returned a program for "
        f"{path} that is not the IR's: {fault}")


def test_a_loader_whose_program_is_the_irs_loads(tmp_path):
    path = tmp_path / "p.r15"
    path.write_text("good")
    program = load_program(get_plugin_manager(plugins=[Loader()]), path)
    assert [s.name for s in program.stages] == ["s"]
