"""The lab "Exact on a real model": its controls, its run (``run``) and what it shows (``view``)."""
