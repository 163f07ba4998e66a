// DeLLM Memory page: correct a fact (POST /api/memory/facts/{id}/rectify/), erase a fact or a
// summary through the Forget panel (forget.js: preview first, nothing deleted before confirming),
// and follow the rebuild of derived records after a deletion (polls GET /api/forget/{id}/).
// The lists are rendered by the server; after each change this script fetches the page again and
// swaps them in, so what it shows is always what the server has.
(function () {
  "use strict";
  const root = document.getElementById("memory");
  if (!root) return;

  const POLL_MS = 2000;
  const statusLine = document.getElementById("memory-status");
  let polling = null;

  const { csrfToken, api } = window.DeLLMApi;

  function setStatus(text, kind) {
    statusLine.textContent = text || "";
    statusLine.className = "memory-status" + (kind ? " " + kind : "");
  }

  // Fetch this page again and swap in the lists and the rebuild box.
  async function refresh() {
    const response = await fetch(location.pathname + location.search, {
      credentials: "same-origin", headers: { Accept: "text/html" },
    });
    if (!response.ok) throw new Error("Could not reload your memory (" + response.status + ").");
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    ["memory-body", "rebuild-slot"].forEach((id) => {
      const now = document.getElementById(id);
      const next = fresh.getElementById(id);
      if (now && next) now.replaceWith(document.adoptNode(next));
    });
  }

  function flash(id) {
    const record = document.querySelector('.memory-record[data-id="' + id + '"]');
    if (!record) return;
    record.scrollIntoView({ block: "nearest" });
    record.classList.remove("flash");
    void record.offsetWidth; // restart the animation
    record.classList.add("flash");
  }

  // --- correct (rectify) -----------------------------------------------------------------------

  function formFor(id) {
    return document.querySelector('.correct-form[data-fact="' + id + '"]');
  }

  function openCorrection(id) {
    document.querySelectorAll(".correct-form:not([hidden])").forEach((f) => closeCorrection(f));
    const form = formFor(id);
    if (!form) return;
    form.hidden = false;
    const input = form.querySelector("input[name=content]");
    input.focus();
    input.select();
  }

  function closeCorrection(form) {
    form.hidden = true;
    const input = form.querySelector("input[name=content]");
    input.value = input.defaultValue;
    const error = form.querySelector(".correct-error");
    error.hidden = true;
    error.textContent = "";
  }

  async function submitCorrection(form) {
    const id = form.dataset.fact;
    const input = form.querySelector("input[name=content]");
    const error = form.querySelector(".correct-error");
    const buttons = form.querySelectorAll("button");
    const content = input.value.trim();
    if (!content) { error.textContent = "Write the corrected fact."; error.hidden = false; input.focus(); return; }
    if (content === input.defaultValue.trim()) { closeCorrection(form); return; }
    buttons.forEach((b) => { b.disabled = true; });
    error.hidden = true;
    try {
      const fact = await api("POST", "/api/memory/facts/" + id + "/rectify/", { content: content });
      await refresh();
      setStatus("Corrected: “" + fact.content + "” is version " + fact.version + "; the old version is kept as history and never used again.", "ok");
      flash(fact.id);
    } catch (e) {
      error.textContent = e.message;
      error.hidden = false;
      buttons.forEach((b) => { b.disabled = false; });
    }
  }

  // --- erase (through the Forget panel) --------------------------------------------------------

  function erase(button) {
    if (!window.DeLLMForget) return;
    const ids = button.dataset.erase.split(",").filter(Boolean).map(Number);
    const kind = button.dataset.kind;
    const earlier = ids.length - 1;
    const what = kind === "summary" ? "summary" : "fact";
    const versions = earlier > 0 ? " and its " + (earlier === 1 ? "earlier version" : earlier + " earlier versions") : "";
    const keeps = kind === "summary"
      ? " The conversation's messages stay; the conversation is summarised again as it goes on."
      : " The messages it was built from, and the conversation summaries that quote them, stay: forget those messages in their conversation to remove them too.";
    window.DeLLMForget.openForItems(ids, {
      heading: "Erase " + what + " #" + button.dataset.id,
      origin: "Erase this " + what + versions + ", and every reply that used " + (earlier > 0 ? "them" : "it") + "." + keeps,
    });
  }

  // --- rebuilds after a deletion ---------------------------------------------------------------

  function pendingRequest() {
    const box = document.getElementById("rebuild-status");
    return box && box.dataset.pending === "1" ? box.dataset.request : null;
  }

  function signature(manifest) {
    return (manifest.rebuilt || []).map((r) => r.id + ":" + r.status).join(",");
  }

  function watch(requestId) {
    if (polling) clearTimeout(polling);
    let last = null;
    const tick = async () => {
      polling = null;
      let manifest;
      try {
        manifest = await api("GET", "/api/forget/" + encodeURIComponent(requestId) + "/");
      } catch (e) {
        polling = setTimeout(tick, POLL_MS * 2);
        return;
      }
      const pending = (manifest.rebuilt || []).some((r) => r.status === "pending");
      const now = signature(manifest);
      if (last !== null && now !== last || !pending) {
        try { await refresh(); } catch (e) { /* keep what is shown; try again on the next tick */ }
      }
      last = now;
      if (pending) polling = setTimeout(tick, POLL_MS);
    };
    polling = setTimeout(tick, POLL_MS);
  }

  // The Forget panel on this page finished a deletion: show what was rebuilt, and follow it.
  document.addEventListener("dellm:forget-done", async (event) => {
    const manifest = event.detail.manifest;
    if (manifest.rebuilt && manifest.rebuilt.length) {
      const url = new URL(location.href);
      url.searchParams.set("after", manifest.request_id);
      history.replaceState(null, "", url.pathname + url.search);
    }
    try {
      await refresh();
      setStatus("");
    } catch (e) {
      setStatus(e.message, "error");
    }
    const requestId = pendingRequest();
    if (requestId) watch(requestId);
  });

  // --- wiring --------------------------------------------------------------------------------

  document.addEventListener("click", (event) => {
    const correct = event.target.closest(".fact-correct");
    if (correct) { event.preventDefault(); openCorrection(correct.dataset.fact); return; }
    const cancel = event.target.closest(".correct-cancel");
    if (cancel) { event.preventDefault(); closeCorrection(cancel.closest(".correct-form")); return; }
    const eraser = event.target.closest(".record-erase");
    if (eraser) { event.preventDefault(); erase(eraser); return; }
    if (event.target.closest("#clear-all-memory") && window.DeLLMForget) window.DeLLMForget.openForAll();
  });
  document.addEventListener("submit", (event) => {
    const form = event.target.closest(".correct-form");
    if (form) { event.preventDefault(); submitCorrection(form); }
  });
  document.addEventListener("keydown", (event) => {
    const form = event.target.closest && event.target.closest(".correct-form");
    if (form && event.key === "Escape") { event.stopPropagation(); closeCorrection(form); }
  }, true);

  const initial = pendingRequest();
  if (initial) watch(initial);

  window.DeLLMMemory = { refresh: refresh };
})();
