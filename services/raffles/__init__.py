"""Raffles (9 NYCRR 4620.22-4620.24): pure rules, actors and the purchaser vault."""
