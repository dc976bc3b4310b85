"""Limits that keep one shared server usable for everyone: the largest input each page accepts.

Every page states these in its help texts (formatted from here, never restated as numbers)
and refuses anything larger with a message. The upload limit is also given to Streamlit
(``st.file_uploader(max_upload_size=…)``, and ``server.maxUploadSize`` in
.streamlit/config.toml), so an oversized file is stopped before it is read into memory.
"""

from __future__ import annotations

#: Largest trace file accepted, in megabytes (10⁶ bytes) and in bytes.
MAX_UPLOAD_MB = 50
MAX_TRACE_BYTES = MAX_UPLOAD_MB * 1_000_000

#: Longest prompt, in characters (checked before tokenising).
MAX_PROMPT_CHARS = 20_000

#: Most new tokens one live run may ask for, and one draft race (it runs every draft in turn).
MAX_NEW_TOKENS = 512
MAX_RACE_NEW_TOKENS = 256

#: Most rows of a p/q table (the overlap and tree lessons), and of the sampling lab's logits.
MAX_PAIR_ROWS = 60
MIN_LOGIT_ROWS, MAX_LOGIT_ROWS = 3, 12

#: Longest custom model id or folder (also the longest a URL may carry for one).
MAX_SOURCE_CHARS = 500
