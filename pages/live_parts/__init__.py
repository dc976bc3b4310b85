"""The live page's own parts: controls, the run (``run``), the finished view and its inspector."""
