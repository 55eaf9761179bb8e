"""The public wire contract: subjects, id tokens, envelopes, replies."""
