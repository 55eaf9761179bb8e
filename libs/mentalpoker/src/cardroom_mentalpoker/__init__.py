"""Mental poker: masking, keys and signatures for dealing cards no server can see."""
