// Draws every <pre class="mermaid"> of the page with the bundled Mermaid (_static/vendor/mermaid.min.js),
// in the theme's light or dark colours, and again when the reader switches the theme.
(() => {
  const sources = new Map();
  const draw = async () => {
    const dark = document.documentElement.dataset.theme === "dark";
    mermaid.initialize({ startOnLoad: false, theme: dark ? "dark" : "default" });
    const blocks = [...document.querySelectorAll("pre.mermaid")];
    for (const block of blocks) {
      if (!sources.has(block)) sources.set(block, block.textContent);
      block.removeAttribute("data-processed");
      block.textContent = sources.get(block);
    }
    await mermaid.run({ nodes: blocks });
  };
  let theme = null;
  const redraw = () => {
    const now = document.documentElement.dataset.theme;
    if (now !== theme) {
      theme = now;
      draw();
    }
  };
  document.addEventListener("DOMContentLoaded", () => {
    redraw();
    new MutationObserver(redraw).observe(document.documentElement, { attributeFilter: ["data-theme"] });
  });
})();
