"""Reports of verdicts: their JSON and JUnit forms, and the HTML page per model configuration."""
