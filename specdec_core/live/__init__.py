"""Services of the live pages: runs, settings, presets, traces, statistics, text, inspector,
race and model choices."""
