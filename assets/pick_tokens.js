// The live page's coloured tokens: a click on a token sends its round and position to
// Python (trigger "pick"), which opens that position in the inspector. Enter or Space on
// a focused token does the same. The HTML comes from Python, already escaped.
export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  parentElement.innerHTML = data.html;
  parentElement.classList.add("sd-pick"); // marks the rendered text (tests wait for it)
  const pick = (el) => {
    setTriggerValue("pick", { round: Number(el.dataset.round), slot: Number(el.dataset.slot) });
  };
  for (const el of parentElement.querySelectorAll(".sd-tok[data-slot]")) {
    el.tabIndex = 0;
    el.setAttribute("role", "button");
  }
  parentElement.onclick = (ev) => {
    const el = ev.target.closest(".sd-tok[data-slot]");
    if (el) pick(el);
  };
  parentElement.onkeydown = (ev) => {
    const el = ev.target.closest(".sd-tok[data-slot]");
    if (el && (ev.key === "Enter" || ev.key === " ")) {
      ev.preventDefault();
      pick(el);
    }
  };
}
