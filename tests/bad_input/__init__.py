"""The project's bad-input catalogue: every input surface escaped, checked and recoverable."""
