"""Pure rules of the hosted games, one subpackage each."""
