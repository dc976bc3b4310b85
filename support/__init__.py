"""What the tests and the benches share: the app under AppTest or served to Chromium, greedy
comparisons, the test tiers. It imports neither ``tests`` nor ``bench``, so both may import it."""
