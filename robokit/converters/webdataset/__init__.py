"""WebDataset tar shards (`--to webdataset`): per-step or per-episode samples with a wids index."""
