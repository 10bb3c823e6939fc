"""Writers, one module per format, found through the registry."""

from robokit.converters.registry import (
    Converter,
    ExtraOption,
    WriteResult,
    available,
    get_converter,
    register_converter,
)

__all__ = ["Converter", "ExtraOption", "WriteResult", "available", "get_converter", "register_converter"]
