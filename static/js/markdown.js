// DeLLM: Markdown in replies, rendered by the vendored marked and sanitised by the vendored DOMPurify,
// so a reply can format text but never run a script. Without them the text stays plain.
(function () {
  "use strict";

  function render(node, text) {
    if (!window.marked || !window.DOMPurify) { node.textContent = text; return; }
    const html = window.marked.parse(text, { gfm: true, breaks: true, async: false });
    node.innerHTML = window.DOMPurify.sanitize(html, { USE_PROFILES: { html: true }, FORBID_TAGS: ["style", "form", "input"] });
    node.querySelectorAll("a[href]").forEach((a) => { a.rel = "noopener noreferrer nofollow"; a.target = "_blank"; });
    node.classList.add("markdown");
  }

  window.DeLLMMarkdown = { render: render };
})();
