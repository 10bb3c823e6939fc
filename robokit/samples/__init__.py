"""Built-in sample data, so tests and `make demo` need nothing from outside."""

from robokit.samples.recording import SampleSpec, write_sample_bag, write_samples

__all__ = ["SampleSpec", "write_sample_bag", "write_samples"]
