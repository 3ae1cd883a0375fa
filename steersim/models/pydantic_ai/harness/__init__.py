"""`steersim conform pydantic-ai`: the real Pydantic AI agent runs, in-process on the virtual-time loop."""
