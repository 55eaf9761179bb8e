"""cardroom: the command line and the composition root of all services."""
