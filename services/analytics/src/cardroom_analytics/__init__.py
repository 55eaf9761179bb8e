"""Analytics: an outside subscriber of the event stream."""
