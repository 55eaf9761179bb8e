"""The game-rules protocol and the table aggregate (pure)."""
