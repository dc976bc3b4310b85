"""About: what the app is built on and how its numbers can be trusted."""

from pages.common.page import start

s, text = start("about")
text.show("body")
