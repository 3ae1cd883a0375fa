"""The core every engine and model is built on: the Model API, the facts and their monitors, the
product of a model with them, fingerprints, replayable paths and the model registry."""
