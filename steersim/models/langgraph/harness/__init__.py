"""What meets the real LangGraph server: its in-process set-up on the virtual-time loop, the no-LLM
graph, scenarios, the recorder, the judge and `steersim conform langgraph`."""
