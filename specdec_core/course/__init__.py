"""Data behind the lesson pages, one module per lesson (named after it); pure numpy, no models."""
