"""What meets a real OpenClaw build: scenarios, the Node driver (`node/`, pinned builds with their lock
file), the translation of its records into events, the judge and its catalogued causes."""
