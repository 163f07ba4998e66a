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

  window.DeLLMApi = { csrfToken: csrfToken, api: api };
})();
