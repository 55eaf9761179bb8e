"""NATS credentials and per-player permissions for cardroom."""
