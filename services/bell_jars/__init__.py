"""Bell jar deals (9 NYCRR 4620.19): the pure rules of a deal's stream and its actor."""
