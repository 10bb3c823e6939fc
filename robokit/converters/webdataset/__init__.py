"""WebDataset tar shards (`--to webdataset`): per-step or per-episode samples with a wids index."""

from robokit.converters.webdataset.writer import WebDatasetWriter

WEBDATASET = WebDatasetWriter()

__all__ = ["WEBDATASET", "WebDatasetWriter"]
