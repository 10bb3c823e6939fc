"""The real TensorFlow Datasets loads what robokit wrote, and robokit reads what TFDS wrote (`make conformance`)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

import robokit
from robokit.converters import get_converter
from robokit.converters.options import WriterOptions
from robokit.converters.rlds.example import decode_example
from robokit.converters.rlds.records import iter_records

from .conftest import CHANNELS

pytestmark = pytest.mark.conformance
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


@pytest.fixture(scope="module")
def tfds() -> Any:
    import tensorflow_datasets

    return tensorflow_datasets


def _sources(sample_dir: Path) -> dict[str, tuple[Any, Any]]:
    """Source episodes by id, with their streams on the writer's grid."""
    return {s.id: (s, robokit.resample(s, 15, channels=CHANNELS)) for s in robokit.open(sorted(sample_dir.iterdir()))}


def test_builder_loads_every_split_with_source_values(tfds: Any, rlds_root: Path, sample_dir: Path) -> None:
    import tensorflow as tf

    b = tfds.builder_from_directory(str(rlds_root))
    steps_feature = b.info.features["steps"]
    assert isinstance(steps_feature, tfds.features.Dataset)
    assert {"is_first", "is_last", "observation", "action", "reward", "discount", "is_terminal"} <= set(
        steps_feature.feature)
    for cam in ("front", "wrist"):
        assert isinstance(steps_feature.feature["observation"][cam], tfds.features.Image)
    root = rlds_root.parent.parent
    assert tfds.builder(b.info.name, data_dir=str(root)).info.splits.keys() == b.info.splits.keys() == {"train", "val"}
    sources = _sources(sample_dir)
    seen = []
    for split, si in b.info.splits.items():
        for path, n in zip(si.filenames, si.shard_lengths, strict=True):
            assert sum(1 for _ in tf.data.TFRecordDataset(str(rlds_root / path))) == n  # TF checks the CRCs
        ds = b.as_dataset(split=split, shuffle_files=False)
        assert int(ds.cardinality()) == si.num_examples
        for ep in ds:
            episode_id = ep["episode_metadata"]["episode_id"].numpy().decode()
            source, src = sources[episode_id]
            steps = list(ep["steps"].as_numpy_iterator())
            assert len(steps) == len(src["joints/position"])
            assert [i for i, s in enumerate(steps) if s["is_first"]] == [0]
            assert [i for i, s in enumerate(steps) if s["is_last"]] == [len(steps) - 1]
            assert isinstance(steps[0]["is_first"], np.bool_) and steps[0]["action"].dtype == np.float32
            for t, step in enumerate(steps):
                assert np.array_equal(step["observation"]["state"], src["joints/position"].values[t].astype(np.float32))
                front, wrist = step["observation"]["front"], step["observation"]["wrist"]
                assert front.dtype == np.uint8 and front.shape == (120, 160, 3)
                assert np.array_equal(front, src["front/rgb"].frame(t).array())
                pil = np.asarray(Image.open(io.BytesIO(src["wrist/rgb"].frame(t).data)), dtype=np.int16)
                diff = np.abs(wrist.astype(np.int16) - pil)  # the same JPEG bytes, through TF's decoder
                assert wrist.shape == (120, 160, 3) and diff.max() <= 8 and diff.mean() < 2
                assert step["language_instruction"].decode() == source.tasks[0]
            seen.append(episode_id)
    assert sorted(seen) == sorted(sources)


def test_slicing_and_skip_decoding(tfds: Any, sample_dir: Path, tmp_path: Path) -> None:
    import tensorflow as tf

    episodes = robokit.open(sorted(sample_dir.iterdir()))
    get_converter("rlds").write(episodes * 2, tmp_path, WriterOptions(extra={"rlds_shard_mb": 0.5}))
    b = tfds.builder_from_directory(str(tmp_path / "rlds" / "robokit" / "1.0.0"))
    assert b.info.splits["train"].num_shards > 1
    assert len(list(b.as_dataset(split="train[:50%]"))) == len(list(b.as_dataset(split="train[:2]"))) == 2
    assert len(list(b.as_dataset(split="train[1:3]"))) == 2
    ep = next(iter(b.as_dataset(split="train", decoders={"steps": tfds.decode.SkipDecoding()})))
    assert ep["steps"]["observation"]["front"].dtype == tf.string  # batched, still encoded (the dlimp/Octo path)


def test_records_are_byte_identical_to_the_tfds_serializer(tfds: Any, rlds_root: Path) -> None:
    from tensorflow_datasets.core.example_serializer import ExampleSerializer

    b = tfds.builder_from_directory(str(rlds_root))
    features = b.info.features
    record = next(iter_records(next(iter(sorted(rlds_root.glob("*-train.tfrecord-*"))))))
    values = decode_example(record)
    steps: dict[str, Any] = {"observation": {}}
    for key, value in values.items():
        if not key.startswith("steps/"):
            continue
        parts = key.split("/")[1:]
        leaf = features["steps"].feature
        for p in parts:
            leaf = leaf[p]
        array = (value if isinstance(value, list)
                 else np.asarray(value).reshape(-1, *leaf.shape).astype(leaf.np_dtype))
        target = steps["observation"] if parts[0] == "observation" else steps
        target[parts[-1]] = array if not isinstance(value, list) or parts[0] == "observation" else [
            v.decode() for v in value]
    episode = {"steps": [{k: (v[i] if k != "observation" else {c: x[i] for c, x in v.items()})
                          for k, v in steps.items()} for i in range(len(steps["is_first"]))],
               "episode_metadata": {k.split("/")[1]: (v[0].decode() if isinstance(v, list) else
                                                      np.asarray(v).reshape(features["episode_metadata"][
                                                          k.split("/")[1]].shape))
                                    for k, v in values.items() if k.startswith("episode_metadata/")}}
    serializer = ExampleSerializer(features.get_serialized_info())
    reference = serializer.get_tf_example(features.encode_example(episode)).SerializeToString(deterministic=True)
    assert reference == record


class _Generated:
    """A dataset generated by TFDS itself in the Open X-Embodiment style (its own image keys, no fps)."""

    @staticmethod
    def build(tfds: Any, data_dir: Path) -> None:
        features = tfds.features.FeaturesDict({
            "steps": tfds.features.Dataset({
                "observation": tfds.features.FeaturesDict({
                    "image": tfds.features.Image(shape=(16, 24, 3), encoding_format="png"),
                    "natural_language_instruction": tfds.features.Text(),
                    "base_pose_tool_reached": tfds.features.Tensor(shape=(7,), dtype=np.float32),
                }),
                "action": tfds.features.FeaturesDict({
                    "world_vector": tfds.features.Tensor(shape=(3,), dtype=np.float32),
                    "terminate_episode": tfds.features.Tensor(shape=(3,), dtype=np.int32),
                }),
                "is_first": tfds.features.Scalar(dtype=np.bool_),
                "is_last": tfds.features.Scalar(dtype=np.bool_),
                "is_terminal": tfds.features.Scalar(dtype=np.bool_),
                "reward": tfds.features.Scalar(dtype=np.float32),
            }),
        })

        def episode(i: int) -> dict[str, Any]:
            n = 3 + i
            return {"steps": [{
                "observation": {"image": np.full((16, 24, 3), 10 * t + i, np.uint8),
                                "natural_language_instruction": f"pick {i}",
                                "base_pose_tool_reached": np.full(7, t + 0.5, np.float32)},
                "action": {"world_vector": np.full(3, -t, np.float32),
                           "terminate_episode": np.array([0, t, 0], np.int32)},
                "is_first": t == 0, "is_last": t == n - 1, "is_terminal": t == n - 1, "reward": float(t == n - 1),
            } for t in range(n)]}

        class FractalLike(tfds.core.GeneratorBasedBuilder):  # type: ignore[misc,name-defined]
            VERSION = tfds.core.Version("0.1.0")

            def _info(self) -> Any:
                return tfds.core.DatasetInfo(builder=self, features=features)

            def _split_generators(self, dl_manager: Any) -> Any:
                return {"train": self._generate_examples(3)}

            def _generate_examples(self, count: int) -> Any:
                for i in range(count):
                    yield i, episode(i)

        FractalLike(data_dir=str(data_dir)).download_and_prepare()


def test_robokit_reads_a_tfds_generated_dataset(tfds: Any, tmp_path: Path) -> None:
    _Generated.build(tfds, tmp_path)
    episodes = robokit.open(tmp_path / "fractal_like")
    assert len(episodes) == 3
    by_task = {ep.tasks[0]: ep for ep in episodes}
    assert sorted(by_task) == ["pick 0", "pick 1", "pick 2"]
    ep = by_task["pick 2"]
    image = ep["image/rgb"]
    assert len(image) == 5 and image.frame(4).array().shape == (16, 24, 3)  # type: ignore[attr-defined]
    assert int(image.frame(4).array()[0, 0, 0]) == 42  # type: ignore[attr-defined]
    assert np.array_equal(ep["action/terminate_episode"].values[:, 1], np.arange(5))  # type: ignore[attr-defined]
    assert np.allclose(ep["base_pose_tool_reached"].values[:, 0], np.arange(5) + 0.5)  # type: ignore[attr-defined]
    lerobot_ready = robokit.resample(ep, 10, channels=["base_pose_tool_reached", "image/rgb"])
    assert len(lerobot_ready["image/rgb"]) == 5


def test_check_strict_passes_and_tfds_reads_the_action_meaning(tfds: Any, rlds_out: Path,
                                                                 rlds_root: Path) -> None:
    from robokit.cli import main

    assert main(["check", "--strict", str(rlds_out)]) == 0  # TFDS itself validated it
    action = tfds.builder_from_directory(str(rlds_root)).info.metadata["action"]  # metadata.json
    assert (action["kind"], action["source"], action["channel"]) == ("delta", "joints/position",
                                                                     "joints/position_delta")
