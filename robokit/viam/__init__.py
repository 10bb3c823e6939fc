"""Viam datasets: the layout robokit's writers and readers share, and the helper for Viam training scripts."""

from robokit.viam.training import TrainingData, load_training_args

__all__ = ["TrainingData", "load_training_args"]
