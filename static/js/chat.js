// DeLLM chat page: websocket streaming and the influence panel. The Forget panel lives in
// forget.js (window.DeLLMForget); this file hands it the forget_preview frames.
(function () {
  "use strict";
  const idNode = document.getElementById("conversation-id");
  if (!idNode) return;
  const conversationId = JSON.parse(idNode.textContent);
  const list = document.getElementById("messages");
  const form = document.getElementById("composer");
  const input = document.getElementById("composer-input");
  const sendButton = document.getElementById("send");
  const stopButton = document.getElementById("stop");
  const statusLine = document.getElementById("status");
  const panel = document.getElementById("influence");
  let socket = null;
  let pending = null; // the assistant bubble being streamed
  let disabled = false; // the conversation was deleted while this page was open

  // While a reply streams, Stop takes Send's place.
  function streaming(on) {
    stopButton.hidden = !on;
    sendButton.hidden = on;
    if (on) stopButton.disabled = false;
  }

  function setStatus(text, isError) {
    statusLine.textContent = text || "";
    statusLine.classList.toggle("error", Boolean(isError));
  }

  // A new bubble at the end of the list, or before ``before`` (a reply written where a forgotten one was).
  function bubble(message, streaming, before) {
    const hint = document.getElementById("empty-hint");
    if (hint) hint.remove();
    const article = document.createElement("article");
    article.className = "message " + (message ? message.role : "assistant") + (streaming ? " streaming" : "");
    article.tabIndex = 0;
    const meta = document.createElement("div");
    meta.className = "meta";
    const content = document.createElement("div");
    content.className = "content";
    article.append(meta, content);
    if (message) fill(article, message);
    else meta.innerHTML = '<span class="role">Assistant</span> <span class="typing">writing…</span>';
    if (before) {
      list.insertBefore(article, before);
      article.scrollIntoView({ block: "nearest" });
    } else {
      list.appendChild(article);
      list.scrollTop = list.scrollHeight;
    }
    return article;
  }

  // Where a forgotten reply was: a note that holds none of it, and "Answer again".
  function replyRemovedNote(questionId) {
    const note = document.createElement("div");
    note.className = "reply-removed";
    note.dataset.question = questionId;
    note.setAttribute("role", "note");
    const text = document.createElement("p");
    text.textContent = "A reply was removed here because it used something you asked me to forget.";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "small answer-again";
    button.dataset.question = questionId;
    button.textContent = "Answer again";
    note.append(text, button);
    return note;
  }

  // After a deletion: a note under every question of this conversation whose reply went.
  async function showRemovedReplies() {
    if (disabled) return;
    const response = await fetch("/api/conversations/" + conversationId + "/messages/", { headers: { Accept: "application/json" } });
    if (!response.ok) return;
    (await response.json()).forEach((message) => {
      const question = document.getElementById("m" + message.id);
      if (!message.reply_removed || !question || list.querySelector('.reply-removed[data-question="' + message.id + '"]')) return;
      question.after(replyRemovedNote(message.id));
    });
  }

  let again = null; // the note whose question is being answered again
  function answerAgain(note) {
    if (!socket || socket.readyState !== WebSocket.OPEN || pending) { setStatus("Not ready yet; try again in a moment.", true); return; }
    socket.send(JSON.stringify({ type: "answer_again", message_id: Number(note.dataset.question) }));
    again = note;
    note.hidden = true;
    pending = bubble(null, true, note);
    streaming(true);
    sendButton.disabled = true;
    setStatus("Answering again…");
  }

  function forgetAction(id) {
    const actions = document.createElement("span");
    actions.className = "msg-actions";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "link msg-forget";
    button.dataset.forget = id;
    button.title = "Forget this message and everything that used it";
    button.setAttribute("aria-label", "Forget message #" + id);
    button.textContent = "Forget";
    actions.append(copyAction(), " ", button);
    return actions;
  }

  function fill(article, message) {
    article.dataset.id = message.id;
    article.id = "m" + message.id;
    article.classList.remove("streaming");
    const meta = article.querySelector(".meta");
    meta.textContent = "";
    const role = document.createElement("span");
    role.className = "role";
    role.textContent = message.role === "user" ? "You" : "Assistant";
    const mid = document.createElement("span");
    mid.className = "mid";
    mid.textContent = "#" + message.id;
    meta.append(role, " ", mid);
    if (message.role === "assistant") {
      const used = document.createElement("span");
      used.className = "used";
      const n = Math.max(0, (message.context || []).length - 1);
      used.textContent = "used " + n + " stored item" + (n === 1 ? "" : "s");
      meta.append(" ", used);
    }
    meta.append(" ", forgetAction(message.id));
    showContent(article, message.content);
  }

  // A reply's Markdown is rendered (safely); what the user typed is shown as typed.
  function showContent(article, text) {
    const content = article.querySelector(".content");
    content.dataset.raw = text;
    if (article.classList.contains("assistant") && window.DeLLMMarkdown) window.DeLLMMarkdown.render(content, text);
    else content.textContent = text;
  }

  function copyAction() {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "link msg-copy";
    button.textContent = "Copy";
    return button;
  }

  // The newest message on the page: a socket opened again asks for what was stored after it.
  function lastShownId() {
    const ids = Array.from(list.querySelectorAll(".message[data-id]"), (m) => Number(m.dataset.id));
    return ids.length ? Math.max(...ids) : 0;
  }

  let reconnecting = false;
  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(scheme + "://" + location.host + "/ws/chat/" + conversationId + "/");
    socket.addEventListener("open", () => {
      sendButton.disabled = disabled;
      setStatus("");
      if (reconnecting) socket.send(JSON.stringify({ type: "history", after: lastShownId() }));
      reconnecting = true;
    });
    socket.addEventListener("close", () => {
      streaming(false);
      sendButton.disabled = true;
      if (disabled) return;
      setStatus("Disconnected; reconnecting…", true);
      setTimeout(connect, 1500);
    });
    socket.addEventListener("message", (event) => {
      const frame = JSON.parse(event.data);
      if (frame.type === "user_message") {
        bubble(frame.message, false);
        refreshTitle(); // the first message names a new conversation
        pending = bubble(null, true);
        streaming(true);
      } else if (frame.type === "token") {
        if (!pending) pending = bubble(null, true);
        pending.querySelector(".content").textContent += frame.delta;
        list.scrollTop = list.scrollHeight;
      } else if (frame.type === "reply") {
        if (!pending) pending = bubble(null, true);
        fill(pending, frame.message);
        pending = null;
        if (again) { again.remove(); again = null; }
        streaming(false);
        sendButton.disabled = false;
        setStatus("");
      } else if (frame.type === "memory_updated") {
        memoryNote(frame);
      } else if (frame.type === "forget_preview") {
        // A deletion request: not answered, not stored; the Forget panel shows what it would remove.
        if (pending) { pending.remove(); pending = null; }
        sendButton.disabled = false;
        setStatus("That is a request to forget: review what it removes in the Forget panel.");
        if (window.DeLLMForget) window.DeLLMForget.showPreview(frame.preview, { origin: "chat" });
      } else if (frame.type === "forget_question") {
        // Maybe a request to forget: nothing is stored until the user says which it is.
        if (pending) { pending.remove(); pending = null; }
        sendButton.disabled = false;
        setStatus("");
        askAboutForgetting(frame.question);
      } else if (frame.type === "history") {
        // What was stored while this page was disconnected: a reply the server finished without it.
        if (pending) { pending.remove(); pending = null; }
        streaming(false);
        frame.messages.forEach((message) => { if (!document.getElementById("m" + message.id)) bubble(message, false); });
      } else if (frame.type === "forget_done") {
        sendButton.disabled = false;
        if (window.DeLLMForget) window.DeLLMForget.showManifest(frame.manifest);
      } else if (frame.type === "error") {
        if (pending) { pending.remove(); pending = null; }
        if (again) { again.hidden = false; again = null; }
        streaming(false);
        sendButton.disabled = false;
        setStatus(frame.detail || "Something went wrong.", true);
      }
    });
  }

  // "Memory updated": a small note under the reply to the message facts were just saved from.
  function memoryNote(frame) {
    const question = document.getElementById("m" + frame.message);
    if (!question || !frame.facts.length) return;
    let at = question;
    while (at.nextElementSibling && at.nextElementSibling.classList.contains("assistant")) at = at.nextElementSibling;
    const note = document.createElement("p");
    note.className = "memory-note";
    note.dataset.message = frame.message;
    note.setAttribute("role", "status");
    note.textContent = "Memory updated: " + frame.facts.map((f) => "“" + f.content + "”").join(", ") + ". ";
    const link = document.createElement("a");
    link.href = "/memory/";
    link.textContent = "Manage memory";
    note.append(link);
    at.after(note);
    if (at.nextElementSibling === note && !note.nextElementSibling) list.scrollTop = list.scrollHeight;
  }

  // The question card for a message that may ask to forget: review the preview, or have it answered.
  function askAboutForgetting(question) {
    document.querySelectorAll(".forget-question").forEach((card) => card.remove());
    const card = document.createElement("div");
    card.className = "forget-question";
    card.setAttribute("role", "group");
    card.setAttribute("aria-label", "Did you want me to forget this?");
    const text = document.createElement("p");
    text.textContent = question.text + " I have not stored your message.";
    const quote = document.createElement("blockquote");
    quote.textContent = question.content;
    const review = document.createElement("button");
    review.type = "button";
    review.className = "primary small forget-question-review";
    review.textContent = question.choices.review;
    const answer = document.createElement("button");
    answer.type = "button";
    answer.className = "small forget-question-answer";
    answer.textContent = question.choices.answer;
    const choose = (frame, status) => {
      if (!socket || socket.readyState !== WebSocket.OPEN) { setStatus("Not connected yet; try again in a moment.", true); return; }
      socket.send(JSON.stringify(frame));
      card.remove();
      sendButton.disabled = true;
      setStatus(status);
    };
    review.addEventListener("click", () => choose({ type: "forget_review", content: question.content }, "Preparing the preview…"));
    answer.addEventListener("click", () => choose({ type: "message", content: question.content, intent: "answer" }, "Thinking…"));
    card.append(text, quote, review, " ", answer);
    list.appendChild(card);
    list.scrollTop = list.scrollHeight;
    review.focus();
  }

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const content = input.value.trim();
    if (!content) { setStatus("Type a message first.", true); return; }
    if (!socket || socket.readyState !== WebSocket.OPEN) { setStatus("Not connected yet; try again in a moment.", true); return; }
    socket.send(JSON.stringify({ type: "message", content: content }));
    input.value = "";
    sendButton.disabled = true;
    setStatus("Thinking…");
  });
  stopButton.addEventListener("click", () => {
    if (!socket || socket.readyState !== WebSocket.OPEN) return;
    socket.send(JSON.stringify({ type: "stop" }));
    stopButton.disabled = true;
    setStatus("Stopping…");
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); form.requestSubmit(); }
  });

  // The conversation's title, in the header, the list and the window's title, as the server has it now.
  function showTitle(conversation) {
    const name = conversation.title || "Conversation " + conversation.id;
    document.getElementById("conversation-title").textContent = name;
    document.title = name + " · DeLLM";
    const link = document.querySelector('.conversations li[data-conversation="' + conversation.id + '"] a');
    if (link) link.textContent = conversation.title || "New conversation";
    renameInput.value = conversation.title;
  }

  async function refreshTitle() {
    try { showTitle(await window.DeLLMApi.api("GET", "/api/conversations/" + conversationId + "/")); } catch (e) { /* kept as it is */ }
  }

  // Rename: the title becomes a field in place; Enter saves, Escape or Cancel leaves it.
  const renameForm = document.getElementById("rename-form");
  const renameInput = document.getElementById("rename-input");
  const renameButton = document.getElementById("rename-conversation");
  const titleHeading = document.getElementById("conversation-title");
  function renaming(on) {
    renameForm.hidden = !on;
    titleHeading.hidden = on;
    renameButton.hidden = on;
    if (on) { renameInput.focus(); renameInput.select(); } else renameButton.focus();
  }
  renameButton.addEventListener("click", () => renaming(true));
  document.getElementById("rename-cancel").addEventListener("click", () => renaming(false));
  renameInput.addEventListener("keydown", (event) => { if (event.key === "Escape") { event.stopPropagation(); renaming(false); } });
  renameForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      showTitle(await window.DeLLMApi.api("PATCH", "/api/conversations/" + conversationId + "/", { title: renameInput.value.trim() }));
      renaming(false);
      setStatus("Renamed.");
    } catch (e) {
      setStatus(e.message, true);
    }
  });

  // Influence panel: what a message was built from, and everything it influenced.
  const KIND_LABELS = { user: "Your message", assistant: "Reply", fact: "Fact", summary: "Summary" };

  function plural(n, word, many) {
    return n + " " + (n === 1 ? word : many || word + "s");
  }

  function itemLine(id, items, extra) {
    const li = document.createElement("li");
    li.dataset.id = id;
    const info = items[id] || {};
    const label = document.createElement("a");
    label.href = info.conversation ? "/c/" + info.conversation + "/#m" + id : "/memory/";
    label.title = "Item #" + id;
    label.textContent = KIND_LABELS[info.role || info.kind] || "Item";
    const excerpt = document.createElement("span");
    excerpt.className = "excerpt";
    excerpt.textContent = info.excerpt ? "“" + info.excerpt + "”" : "";
    li.append(label, " ", excerpt);
    if (extra) li.append(extra);
    return li;
  }

  async function showInfluence(article) {
    const id = article.dataset.id;
    if (!id) return;
    document.querySelectorAll(".message.selected").forEach((m) => m.classList.remove("selected"));
    article.classList.add("selected");
    document.getElementById("influence-title").textContent = "#" + id;
    const body = document.getElementById("influence-body");
    body.textContent = "Loading…";
    panel.hidden = false;
    const response = await fetch("/api/messages/" + id + "/influence/", { headers: { Accept: "application/json" } });
    const data = await response.json();
    body.textContent = "";
    if (!response.ok) { body.textContent = data.detail || "Could not load."; return; }
    const items = data.items || {};
    const ctxTitle = document.createElement("h3");
    // As the reply's badge counts: its context is the question plus the stored items retrieved for it.
    ctxTitle.textContent = article.classList.contains("assistant") && data.context.length
      ? "Written with your question and " + plural(data.context.length - 1, "stored item") + " in view"
      : "Built from";
    const ctx = document.createElement("ul");
    ctx.className = "context-list";
    data.context.forEach((cid) => ctx.appendChild(itemLine(cid, items)));
    if (!data.context.length) ctx.innerHTML = '<li class="muted">Nothing: this message was written by you.</li>';
    const infTitle = document.createElement("h3");
    infTitle.textContent = "Later used by " + plural(data.influenced.length, "item");
    const inf = document.createElement("ul");
    inf.className = "influenced-list";
    data.influenced.forEach((entry) => {
      const path = document.createElement("details");
      path.className = "path";
      const summary = document.createElement("summary");
      summary.textContent = entry.depth === 1 ? "Used it directly" : "Used it through " + plural(entry.depth - 1, "other item");
      path.append(summary, "Path: " + entry.path.map((p) => "#" + p).join(" → "));
      inf.appendChild(itemLine(entry.id, items, path));
    });
    if (!data.influenced.length) inf.innerHTML = '<li class="muted">No later message used it.</li>';
    const picture = document.createElement("figure");
    picture.className = "graph-wrap";
    picture.id = "influence-graph";
    body.append(picture, ctxTitle, ctx, infTitle, inf);
    // A click on an item of this page opens its influence here; any other item opens where it lives.
    window.DeLLMApi.graphInto(picture, "/api/messages/" + id + "/influence/graph/", (itemId, event) => {
      const shown = list.querySelector('.message[data-id="' + itemId + '"]');
      if (shown) { event.preventDefault(); showInfluence(shown); }
    });
    document.querySelectorAll(".message.influenced").forEach((m) => m.classList.remove("influenced"));
    data.influenced.forEach((entry) => {
      const el = list.querySelector('.message[data-id="' + entry.id + '"]');
      if (el) el.classList.add("influenced");
    });
  }

  async function copyMessage(article) {
    const content = article.querySelector(".content");
    try {
      await navigator.clipboard.writeText(content.dataset.raw || content.textContent);
      setStatus("Copied.");
    } catch (e) {
      setStatus("Could not copy: your browser did not allow it.", true);
    }
  }

  function closeInfluence() {
    panel.hidden = true;
    document.querySelectorAll(".message.selected, .message.influenced").forEach((m) => m.classList.remove("selected", "influenced"));
  }

  list.addEventListener("click", (event) => {
    const copy = event.target.closest(".msg-copy");
    if (copy) { copyMessage(copy.closest(".message")); return; }
    const answer = event.target.closest(".answer-again");
    if (answer) { answerAgain(answer.closest(".reply-removed")); return; }
    if (event.target.closest(".msg-actions")) return; // the Forget action is handled by forget.js
    const article = event.target.closest(".message");
    if (!article) return;
    // While the Forget panel is open, a click points at the message's line in it instead.
    if (window.DeLLMForget && window.DeLLMForget.isOpen()) { window.DeLLMForget.focusItem(article.dataset.id); return; }
    showInfluence(article);
  });
  list.addEventListener("keydown", (event) => {
    if (event.key !== "Enter" || event.target.closest(".msg-actions")) return;
    const article = event.target.closest(".message");
    if (article && !(window.DeLLMForget && window.DeLLMForget.isOpen())) showInfluence(article);
  });
  document.getElementById("influence-close").addEventListener("click", closeInfluence);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !panel.hidden) closeInfluence();
  });
  document.addEventListener("dellm:forget-open", closeInfluence);
  document.addEventListener("dellm:forget-done", showRemovedReplies);
  document.addEventListener("dellm:conversation-deleted", () => {
    // The page's conversation is gone: stop writing to it.
    input.disabled = true;
    sendButton.disabled = true;
    disabled = true;
  });
  list.querySelectorAll(".message").forEach((article) => {
    showContent(article, article.querySelector(".content").textContent);
  });
  sendButton.disabled = true;
  if (!list.querySelector(".message")) input.focus(); // a new conversation: ready to type
  connect();
})();
