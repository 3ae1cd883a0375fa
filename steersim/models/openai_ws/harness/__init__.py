"""What meets real clients: the model-driven WebSocket server, the session that judges a client against
the model, the example runs of the spec's seed client, and `node/` with the pinned Node client."""
