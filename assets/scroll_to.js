// Scroll a container drawn by the page into view and, when asked, give it the keyboard's focus.
// Called by pages/common/page.py (scroll_to) with {selector, focus}. The container may be drawn
// a moment after this script runs, so it is looked for a few times before giving up.
function sdScrollTo({ selector, focus }) {
  let tries = 0;
  const go = () => {
    const el = document.querySelector(selector);
    if (!el) {
      if (++tries < 40) setTimeout(go, 100);
      return;
    }
    el.scrollIntoView({ behavior: "smooth", block: "start" });
    if (focus) {
      if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
      el.focus({ preventScroll: true });
    }
  };
  go();
}
