"""TFDS `features.json`: the nodes robokit writes, and a walker giving every stored leaf of any dataset.

Nodes are what `FeatureConnector.to_proto()` gives through `MessageToDict` (keys sorted on dump), so
TFDS restores the same feature classes; the walker reads TFDS-generated files too (Open X-Embodiment).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Node = dict[str, Any]
_PKG = "tensorflow_datasets.core.features."
_DICT = _PKG + "features_dict.FeaturesDict"
_DATASET = _PKG + "dataset_feature.Dataset"


def _doc(node: Node, doc: str) -> Node:
    return {**node, "description": doc} if doc else node


def features_dict(children: Mapping[str, Node], doc: str = "") -> Node:
    return _doc({"pythonClassName": _DICT, "featuresDict": {"features": dict(children)}}, doc)


def dataset(feature: Node) -> Node:
    """An RLDS `steps` sequence of unknown length."""
    return {"pythonClassName": _DATASET, "sequence": {"feature": feature, "length": "-1"}}


def tensor(shape: tuple[int, ...], dtype: str, doc: str = "") -> Node:
    """A Tensor (a Scalar when `shape` is empty), stored uncompressed."""
    cls = "scalar.Scalar" if not shape else "tensor_feature.Tensor"
    dims: Node = {"dimensions": [str(d) for d in shape]} if shape else {}
    return _doc({"pythonClassName": _PKG + cls, "tensor": {"dtype": dtype, "encoding": "none", "shape": dims}}, doc)


def image(shape: tuple[int, int, int], dtype: str, fmt: str, doc: str = "") -> Node:
    dims = {"dimensions": [str(d) for d in shape]}
    node = {"pythonClassName": _PKG + "image_feature.Image",
            "image": {"dtype": dtype, "encodingFormat": fmt, "shape": dims}}
    return _doc(node, doc)


def text(doc: str = "") -> Node:
    return _doc({"pythonClassName": _PKG + "text_feature.Text", "text": {}}, doc)


@dataclass(frozen=True)
class Leaf:
    """One stored feature: its flat key, kind (tensor/image/text/other), per-element shape, dtype, encoding.

    `sequence_rank` counts the sequences (Dataset/Sequence) above it: 1 for RLDS step fields.
    """

    key: str
    kind: str
    shape: tuple[int, ...]
    dtype: str
    encoding: str = "none"
    format: str = ""
    doc: str = ""
    sequence_rank: int = 0


def _shape(content: Mapping[str, Any]) -> tuple[int, ...]:
    return tuple(int(d) for d in content.get("shape", {}).get("dimensions", []))


def leaves(node: Mapping[str, Any], prefix: str = "", rank: int = 0) -> dict[str, Leaf]:
    """Every leaf below `node`, keyed as the Example stores it (`steps/observation/image`)."""
    if "featuresDict" in node:
        out: dict[str, Leaf] = {}
        for name, child in node["featuresDict"].get("features", {}).items():
            out.update(leaves(child, f"{prefix}{name}/", rank))
        return out
    if "sequence" in node:
        return leaves(node["sequence"]["feature"], prefix, rank + 1)
    key, doc = prefix.rstrip("/"), str(node.get("description", ""))
    if "tensor" in node:
        t = node["tensor"]
        return {key: Leaf(key, "tensor", _shape(t), t.get("dtype", "float32"), t.get("encoding", "none").lower(),
                          doc=doc, sequence_rank=rank)}
    if "image" in node:
        i = node["image"]
        return {key: Leaf(key, "image", _shape(i), i.get("dtype", "uint8"), format=i.get("encodingFormat", ""),
                          doc=doc, sequence_rank=rank)}
    if "text" in node:
        return {key: Leaf(key, "text", (), "string", doc=doc, sequence_rank=rank)}
    if "classLabel" in node:
        return {key: Leaf(key, "tensor", (), "int64", doc=doc, sequence_rank=rank)}
    return {key: Leaf(key, "other", (), "", doc=doc, sequence_rank=rank)}
