"""``serq run PROGRAM --format summary``: one line per observe, ``name count mean``, and one per stage,
``stage name completions utilisation``.

A report format is ``reporter(report, out)``, registered through ``serq_report_register_formats``;
``report.result`` is a :class:`serq_ir.report.Result`.
"""

from __future__ import annotations

from serq import hookimpl


def summary(report, out):
    result = report.result
    for name, obs in result.observes.items():
        out.write(f"{name} {obs.count} {obs.mean:g}\n")
    for stage in result.stages:
        label = stage.name if stage.index is None else f"{stage.name}[{stage.index}]"
        out.write(f"stage {label} {stage.completions} {stage.utilisation:g}\n")


@hookimpl
def serq_report_register_formats(register):
    register("summary", summary)
