"""Batch export: manifest, many formats in one pass, cache."""

from robokit.export.items import ItemReport
from robokit.export.job import ExportError, ExportJob, FormatReport, export

__all__ = ["ExportError", "ExportJob", "FormatReport", "ItemReport", "export"]
