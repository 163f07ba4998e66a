// DeLLM: the one JSON helper the pages share (session cookie + CSRF header, errors as exceptions).
(function () {
  "use strict";

  function csrfToken() {
    const found = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    if (found) return decodeURIComponent(found[1]);
    const field = document.querySelector("input[name=csrfmiddlewaretoken]");
    return field ? field.value : "";
  }

  async function api(method, url, body) {
    const response = await fetch(url, {
      method: method,
      credentials: "same-origin",
      headers: { Accept: "application/json", "Content-Type": "application/json", "X-CSRFToken": csrfToken() },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) {
      const error = new Error((data && data.detail) || "The server answered " + response.status + ".");
      error.code = data && data.code;
      error.status = response.status;
      throw error;
    }
    return data;
  }

  // A picture of influence drawn by the server (SVG) put into ``container``; its items are links, and
  // ``onItem(id, event)`` may handle a click on one instead of following it.
  async function graphInto(container, url, onItem) {
    container.textContent = "Drawing…";
    let response;
    try { response = await fetch(url, { credentials: "same-origin", headers: { Accept: "image/svg+xml, application/json" } }); } catch (e) { response = null; }
    if (!response || !response.ok) { container.textContent = "Could not draw the picture."; return; }
    container.innerHTML = await response.text(); // the server's own SVG: every text in it is escaped
    if (onItem) {
      container.querySelectorAll(".graph-node").forEach((node) => {
        node.addEventListener("click", (event) => onItem(node.dataset.id, event));
      });
    }
  }

  window.DeLLMApi = { csrfToken: csrfToken, api: api, graphInto: graphInto };
})();
