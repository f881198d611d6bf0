// Draws every <pre class="mermaid"> of the page with the bundled Mermaid (_static/vendor/mermaid.min.js).
// Always in Mermaid's light theme: in the dark theme, the PyData theme's own CSS inverts a diagram's SVG.
document.addEventListener("DOMContentLoaded", () => {
  mermaid.initialize({ startOnLoad: false, theme: "default" });
  mermaid.run({ querySelector: "pre.mermaid" });
});
