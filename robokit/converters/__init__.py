"""Writers, one module per format, found through the registry."""

from robokit.converters.registry import (
    AnnotatedSceneWriter,
    Converter,
    EpisodeWriter,
    ExtraOption,
    SceneWriter,
    WriteResult,
    available,
    get_converter,
    kind_of,
    register_converter,
)

__all__ = ["AnnotatedSceneWriter", "Converter", "EpisodeWriter", "ExtraOption", "SceneWriter", "WriteResult",
           "available", "get_converter", "kind_of", "register_converter"]
