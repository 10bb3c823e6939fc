"""Batch export: manifest, many formats in one pass, cache. The package is callable: `robokit.export(...)` runs
`export` while `robokit.export.job` and the other modules stay importable (and patchable) by name."""

import sys
from types import ModuleType
from typing import Any

from robokit.export.items import ItemReport
from robokit.export.job import ExportError, ExportJob, FormatReport, export


class _CallableModule(ModuleType):
    """This package's type: calling it calls `export` (looked up here, so patching `robokit.export.export` works)."""

    def __call__(self, *args: Any, **kwargs: Any) -> ExportJob:
        return export(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule

__all__ = ["ExportError", "ExportJob", "FormatReport", "ItemReport", "export"]
