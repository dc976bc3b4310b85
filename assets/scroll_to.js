// Scroll a container drawn by the page into view and, when asked, give it the keyboard's focus.
// Called by pages/common/page.py (scroll_to) with {selector, focus}. The container may be drawn
// a moment after this script runs, and blocks above it may still grow while the page is drawn,
// so it is looked for until found and scrolled to again twice as the page settles.
function sdScrollTo({ selector, focus }) {
  let tries = 0;
  const show = (el) => el.scrollIntoView({ behavior: "auto", block: "start" });
  const go = () => {
    const el = document.querySelector(selector);
    if (!el) {
      if (++tries < 50) setTimeout(go, 100);
      return;
    }
    show(el);
    if (focus) {
      if (!el.hasAttribute("tabindex")) el.setAttribute("tabindex", "-1");
      el.focus({ preventScroll: true });
    }
    for (const ms of [400, 1200]) setTimeout(() => show(document.querySelector(selector) || el), ms);
  };
  go();
}
