"""Batch export: manifest, many formats in one pass, cache."""

from robokit.export.job import ExportError, ExportJob, FormatReport, ItemReport, export

__all__ = ["ExportError", "ExportJob", "FormatReport", "ItemReport", "export"]
