"""Support for harnesses that run a real implementation: the virtual-time event loop and the
validation of an observed run against the model."""
