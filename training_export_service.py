"""The training-export service's documented entry point: `make run SCRIPT=training-export-service:main ARGS=...`."""

from robokit.cli.training_export import main

__all__ = ["main"]

if __name__ == "__main__":
    main()
