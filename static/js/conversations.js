// DeLLM conversation list: search by title or by what was said (the server looks through both).
(function () {
  "use strict";
  const input = document.getElementById("conversation-search");
  if (!input) return;
  const status = document.getElementById("conversation-search-status");
  let timer = null;
  let seq = 0;

  async function search() {
    const query = input.value.trim();
    const items = document.querySelectorAll(".conversations li[data-conversation]");
    const mine = ++seq;
    if (!query) {
      items.forEach((li) => { li.hidden = false; });
      status.textContent = "";
      return;
    }
    let found;
    try { found = await window.DeLLMApi.api("GET", "/api/conversations/?q=" + encodeURIComponent(query)); } catch (e) { return; }
    if (mine !== seq) return; // a newer search has been asked
    const ids = new Set(found.map((c) => c.id));
    items.forEach((li) => { li.hidden = !ids.has(Number(li.dataset.conversation)); });
    status.textContent = found.length === 0 ? "No conversation matches." : found.length === 1 ? "1 conversation matches." : found.length + " conversations match.";
  }

  input.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(search, 200);
  });
})();
