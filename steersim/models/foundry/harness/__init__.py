"""What meets the real `azure-ai-agentserver-core` package: scenarios, the in-process runner, the judge
and its root causes, the Responses host surface, and the standalone reproductions in `repro/`."""
