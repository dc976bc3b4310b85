"""Reproducible training of the shipped EAGLE-style draft head (``python -m train <stage>``)."""
