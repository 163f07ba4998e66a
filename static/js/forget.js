// DeLLM Forget panel: preview what a deletion removes (matched items, and tainted items that used
// them), let the user relax it (keep items, limit the depth), confirm, and show the manifest.
// It talks to the forget API with the session cookie; chat.js hands it forget_preview frames.
// It also runs without a conversation (the Memory page): no #conversation-id, no #messages; it then
// announces each finished deletion with a "dellm:forget-done" event for memory.js.
(function () {
  "use strict";
  const panel = document.getElementById("forget");
  if (!panel) return;

  const $ = (id) => document.getElementById(id);
  const els = {
    heading: $("forget-heading"),
    search: $("forget-search"),
    query: $("forget-query"),
    mode: $("forget-mode"),
    origin: $("forget-origin"),
    status: $("forget-status"),
    preview: $("forget-preview"),
    counts: $("forget-counts"),
    depth: $("forget-depth"),
    warning: $("forget-warning"),
    items: $("forget-items"),
    confirm: $("forget-confirm"),
    cancel: $("forget-cancel"),
    expiry: $("forget-expiry"),
    result: $("forget-result"),
    graph: $("forget-graph"),
    graphFigure: $("forget-graph-figure"),
    summary: $("forget-summary"),
    more: $("forget-more"),
    job: $("forget-job"),
    progress: $("forget-progress"),
    progressLabel: $("forget-progress-label"),
  };
  // How often a running deletion job's progress is asked for.
  const PROGRESS_POLL_MS = 500;
  const KIND_NAMES = { message: ["message", "messages"], fact: ["fact", "facts"], summary: ["summary", "summaries"] };
  const idNode = document.getElementById("conversation-id");
  const currentConversation = idNode ? JSON.parse(idNode.textContent) : null;
  const REASONS = {
    id: "chosen by you",
    exact: "contains the exact text",
    keyword: "matches the words",
    semantic: "similar in meaning",
    conversation: "in the conversation",
    all: "everything you stored",
    fact_source: "a matched fact was taken from it",
    kind: "the same kind of information",
    added: "added by you",
  };
  const RELAXED = "Kept items may still reveal what you asked to forget.";

  // params: what the current preview was asked with (re-sent when the depth changes).
  // strictTainted: how many items a strict preview of the same request tainted, when known.
  // seq: the latest preview request; older answers that arrive late are ignored.
  const state = { preview: null, params: null, strictTainted: null, busy: false, keep: new Set(), add: new Set(), seq: 0 };

  // --- helpers -----------------------------------------------------------------------------

  const { csrfToken, api } = window.DeLLMApi;

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function plural(n, word, many) {
    return n + " " + (n === 1 ? word : many || word + "s");
  }

  // A short quoted excerpt, for explanations a person can read at a glance.
  function quoted(text) {
    if (!text) return "something you are forgetting";
    const one = text.replace(/\s+/g, " ").trim();
    return "“" + (one.length > 70 ? one.slice(0, 69).trimEnd() + "…" : one) + "”";
  }

  function sourceNoun(entry) {
    if (!entry) return "";
    if (entry.role === "user") return "your message ";
    if (entry.role === "assistant") return "the reply ";
    if (entry.kind === "fact") return "the fact ";
    if (entry.kind === "summary") return "the summary ";
    return "";
  }

  // Why a tainted item goes, in words: the item it used directly, quoted.
  function plainExplanation(entry, byId) {
    const parent = byId.get(entry.path[entry.path.length - 2]);
    const what = sourceNoun(parent) + quoted(parent && parent.excerpt);
    let text;
    if (entry.kind === "fact") text = "This fact was taken from " + what + ".";
    else if (entry.kind === "summary") text = "This summary was built from " + what + ".";
    else if (entry.role === "assistant") text = "This reply was written with " + what + " in view.";
    else text = "This message used " + what + ".";
    if (entry.depth > 1) text += " That goes back, " + plural(entry.depth, "step") + " away, to what you asked to forget.";
    return text;
  }

  function details(lines) {
    const box = el("details", "item-details");
    box.appendChild(el("summary", null, "Details"));
    lines.forEach(([className, text]) => box.appendChild(el("div", className, text)));
    return box;
  }

  function setStatus(text, kind) {
    els.status.textContent = text || "";
    els.status.className = "forget-status" + (kind ? " " + kind : "");
  }

  function conversationLabel(id) {
    if (id === null || id === undefined) return "Derived memory (summaries and facts)";
    if (id === currentConversation) return "This conversation";
    const link = document.querySelector('.conversations li[data-conversation="' + id + '"] a');
    const title = link ? link.textContent.trim() : "";
    return "Conversation: " + (title && title !== "New conversation" ? title : "untitled (no. " + id + ")");
  }

  function clearChatStatus() {
    const line = document.getElementById("status");
    if (line && !line.classList.contains("error")) line.textContent = "";
  }

  function messageElement(id) {
    return document.querySelector('#messages .message[data-id="' + id + '"]');
  }

  function clearHighlights() {
    document.querySelectorAll("#messages .message.matched, #messages .message.tainted").forEach((m) => {
      m.classList.remove("matched", "tainted");
    });
  }

  function highlight(preview) {
    clearHighlights();
    preview.matched.forEach((e) => { const m = messageElement(e.id); if (m) m.classList.add("matched"); });
    preview.tainted.forEach((e) => { const m = messageElement(e.id); if (m) m.classList.add("tainted"); });
    const first = document.querySelector("#messages .message.matched, #messages .message.tainted");
    if (first) first.scrollIntoView({ block: "nearest" });
  }

  // --- opening ----------------------------------------------------------------------------

  function open(options) {
    options = options || {};
    document.dispatchEvent(new CustomEvent("dellm:forget-open"));
    panel.hidden = false;
    document.body.classList.add("forgetting");
    els.heading.textContent = options.heading || "Forget";
    els.search.hidden = !options.search;
    els.origin.hidden = !options.origin;
    els.origin.textContent = options.origin || "";
    els.preview.hidden = true;
    els.result.hidden = true;
    els.result.textContent = "";
    els.items.textContent = "";
    els.job.hidden = true;
    setStatus("");
    state.preview = null;
    state.seq += 1;
    state.keep = new Set();
    state.strictTainted = null;
    els.depth.value = "";
  }

  // Drop an unconfirmed preview on the server as soon as it is abandoned, so the words of the
  // request do not wait for the preview to expire.
  function discard(preview) {
    if (!preview || preview.status !== "previewed") return;
    fetch("/api/forget/" + preview.request_id + "/cancel/", {
      method: "POST",
      headers: { Accept: "application/json", "X-CSRFToken": csrfToken() },
      credentials: "same-origin",
    }).catch(() => {});
  }

  function close() {
    discard(state.preview);
    panel.hidden = true;
    document.body.classList.remove("forgetting");
    clearHighlights();
    clearChatStatus();
    state.preview = null;
    state.params = null;
    state.seq += 1;
  }

  function openSearch() {
    open({ search: true, heading: "Forget…" });
    els.query.focus();
  }

  function openForMessage(id) {
    open({ heading: "Forget message #" + id, origin: "Forget message #" + id + " and everything that used it." });
    requestPreview({ mode: "ids", message_ids: [Number(id)] });
  }

  // Any stored items by id (the Memory page erases a fact or a summary, with its earlier versions).
  function openForItems(ids, options) {
    options = options || {};
    open({ heading: options.heading || "Forget", origin: options.origin });
    requestPreview({ mode: "ids", message_ids: ids.map(Number) });
  }

  function openForConversation(id) {
    const button = $("delete-conversation");
    if (id === currentConversation && button && button.dataset.temporary) {
      open({ heading: "Discard temporary chat", origin: "Forget this temporary chat and everything in it. The deletion is recorded in your Deletion history, without its content." });
      requestPreview({ mode: "conversation", conversation_id: Number(id) });
      return;
    }
    open({
      heading: "Delete conversation",
      origin: "Delete " + (id === currentConversation ? "this conversation" : conversationLabel(id)) +
        ": all its messages, the conversation itself, and every reply elsewhere that used them.",
    });
    requestPreview({ mode: "conversation", conversation_id: Number(id) });
  }

  // "Clear all memory" (the Memory page): everything stored, previewed like any other request.
  function openForAll() {
    open({
      heading: "Clear all memory",
      origin: "Forget everything I remember: every conversation, message, fact and summary. Your account and " +
        "tokens stay. Nothing is deleted until you confirm.",
    });
    requestPreview({ mode: "all" });
  }

  // A preview that arrived from the chat composer ("Forget that I live in Lisbon").
  function showPreview(preview, options) {
    options = options || {};
    open({ search: true, heading: "Forget" });
    els.query.value = preview.query || "";
    els.mode.value = ["natural", "keyword", "exact", "semantic"].includes(preview.mode) ? preview.mode : "natural";
    state.params = { mode: preview.mode, query: preview.query || "" };
    if (preview.threshold !== null && preview.threshold !== undefined) state.params.threshold = preview.threshold;
    if (options.origin === "chat") {
      els.origin.hidden = false;
      els.origin.textContent = "You asked me to forget “" + (preview.query || "") + "”. Nothing was stored or answered; nothing is deleted until you confirm.";
    }
    render(preview);
  }

  // --- preview ----------------------------------------------------------------------------

  async function requestPreview(params, depth) {
    state.params = params;
    const seq = ++state.seq;
    const body = Object.assign({}, params);
    if (depth !== undefined && depth !== null && depth !== "") body.depth = Number(depth);
    els.preview.hidden = true;
    els.result.hidden = true;
    setStatus("Looking for what would be forgotten…", "busy");
    try {
      const preview = await api("POST", "/api/forget/preview/", body);
      if (seq !== state.seq) return; // superseded by a newer request, or the panel was closed
      render(preview);
    } catch (error) {
      if (seq !== state.seq) return;
      clearHighlights();
      setStatus(error.message, "error");
    }
  }

  // A checkbox that puts an item in one of the user's choices (keep a tainted item, add a related one).
  function choiceBox(li, id, options) {
    const label = el("label", options.labelClass || options.label);
    const box = document.createElement("input");
    box.type = "checkbox";
    box.className = options.boxClass;
    box.value = id;
    box.checked = options.set.has(id);
    box.setAttribute("aria-label", options.aria + id);
    box.addEventListener("change", () => {
      if (box.checked) options.set.add(id); else options.set.delete(id);
      li.classList.toggle(options.itemClass, box.checked);
      updateSummary();
    });
    li.classList.toggle(options.itemClass, box.checked);
    label.append(box, " " + options.label);
    return label;
  }

  function itemNode(entry, kind, byId) {
    const li = el("li", "forget-item " + kind);
    li.dataset.id = entry.id;
    const head = el("div", "item-head");
    head.appendChild(el("span", "badge " + kind, kind === "matched" ? "matches" : "used it"));
    const link = el(entry.conversation ? "a" : "span", "item-id", "#" + entry.id);
    if (entry.conversation) link.href = "/c/" + entry.conversation + "/#m" + entry.id;
    head.append(" ", link, " ", el("span", "item-role", entry.role === "user" ? "You" : entry.role === "assistant" ? "Assistant" : (entry.kind || "item")));
    if (kind === "matched") {
      head.append(" ", el("span", "reason", REASONS[entry.reason] || entry.reason));
    } else {
      head.append(" ", el("span", "depth-tag", entry.depth === 1 ? "directly" : entry.depth + " steps away"));
      head.append(" ", choiceBox(li, entry.id, { set: state.keep, label: "keep", boxClass: "keep-box",
        itemClass: "kept", aria: "Keep #" }));
    }
    li.appendChild(head);
    li.appendChild(el("div", "excerpt", entry.excerpt === null || entry.excerpt === undefined ? "(no longer stored)" : entry.excerpt));
    if (kind === "tainted") {
      li.appendChild(el("div", "explanation", plainExplanation(entry, byId)));
      if (entry.kind === "summary" || entry.kind === "fact") {
        li.appendChild(el("div", "derived-note", "It will be rebuilt from what remains (or removed if nothing remains)."));
      }
      li.appendChild(details([
        ["tech-explanation", "Item #" + entry.id + ": " + entry.explanation + "."],
        ["path", "Path: " + entry.path.map((p) => "#" + p).join(" → ")],
      ]));
    } else if (entry.score !== undefined && entry.score !== null) {
      const threshold = state.preview && state.preview.threshold;
      li.appendChild(details([["score", "Item #" + entry.id + " · similarity " + Number(entry.score).toFixed(2) +
        (threshold !== null && threshold !== undefined ? " (needed: " + threshold + ")" : "")]]));
    }
    return li;
  }

  // A possibly related item: not deleted unless the user ticks "add" (it then goes with what used it).
  function relatedNode(entry) {
    const li = el("li", "forget-item related");
    li.dataset.id = entry.id;
    const head = el("div", "item-head");
    head.appendChild(el("span", "badge related", "possibly related"));
    const link = el(entry.conversation ? "a" : "span", "item-id", "#" + entry.id);
    if (entry.conversation) link.href = "/c/" + entry.conversation + "/#m" + entry.id;
    head.append(" ", link, " ", el("span", "item-role", entry.role === "user" ? "You" : (entry.kind || "item")));
    head.append(" ", choiceBox(li, entry.id, { set: state.add, label: "also forget", boxClass: "add-box",
      itemClass: "added", aria: "Also forget #", labelClass: "add" }));
    li.appendChild(head);
    li.appendChild(el("div", "excerpt", entry.excerpt));
    li.appendChild(el("div", "explanation", "Not included: it " + entry.why + "."));
    return li;
  }

  function relatedList(entries) {
    const section = el("section", "forget-group related-group");
    section.appendChild(el("h3", null, "Possibly related — not included unless you tick them"));
    const ul = el("ul");
    entries.forEach((entry) => ul.appendChild(relatedNode(entry)));
    section.appendChild(ul);
    return section;
  }

  function render(preview) {
    if (state.preview && state.preview.request_id !== preview.request_id) discard(state.preview);
    state.preview = preview;
    setStatus("");
    els.result.hidden = true;
    const tainted = preview.tainted.map((e) => e.id);
    state.keep = new Set([...state.keep].filter((id) => tainted.includes(id)));
    const related = (preview.related || []).map((e) => e.id);
    state.add = new Set([...state.add].filter((id) => related.includes(id)));
    if (preview.depth === null || preview.depth === undefined) state.strictTainted = count(preview, "tainted");
    els.depth.value = preview.depth === null || preview.depth === undefined ? "" : String(preview.depth);
    if (els.depth.value === "" && preview.depth !== null && preview.depth !== undefined) {
      // A depth outside the menu (e.g. 0 or 5 from the API): show it as its own choice.
      const option = el("option", null, preview.depth + " steps");
      option.value = String(preview.depth);
      els.depth.appendChild(option);
      els.depth.value = option.value;
    }
    highlight(preview);
    els.items.textContent = "";
    els.graph.hidden = !preview.matched.length;
    els.graphFigure.textContent = "";
    if (els.graph.open) drawGraph();
    els.preview.hidden = false;
    els.preview.classList.toggle("empty", !preview.matched.length);
    if (!preview.matched.length) {
      const what = preview.query ? "“" + preview.query + "”" : "this request";
      const empty = el("div", "forget-empty");
      empty.appendChild(el("p", "nothing", "Nothing matches " + what + ". Nothing will be deleted."));
      if ((preview.related || []).length) {
        empty.appendChild(el("p", "muted", "Some items are close; tick any you want forgotten, then Forget."));
        empty.appendChild(relatedList(preview.related));
        els.confirm.hidden = false;
        els.cancel.textContent = "Cancel";
        els.items.appendChild(empty);
        els.counts.textContent = "";
        els.warning.hidden = true;
        updateSummary();
        return;
      }
      if (preview.mode !== "ids" && preview.mode !== "conversation") {
        empty.appendChild(el("p", "muted", "Try other words, or another way of matching (keywords, exact text, meaning)."));
      }
      els.items.appendChild(empty);
      els.counts.textContent = "";
      els.warning.hidden = true;
      els.confirm.hidden = true;
      els.cancel.textContent = "Close";
      els.expiry.textContent = "";
      return;
    }
    els.confirm.hidden = false;
    els.cancel.textContent = "Cancel";

    // Group by conversation: this page's first, then the others, then derived memory.
    const groups = new Map();
    const add = (entry, kind) => {
      const key = entry.conversation === undefined ? null : entry.conversation;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push({ entry: entry, kind: kind });
    };
    preview.matched.forEach((e) => add(e, "matched"));
    preview.tainted.forEach((e) => add(e, "tainted"));
    const byId = new Map([...preview.matched, ...preview.tainted].map((e) => [e.id, e]));
    const keys = [...groups.keys()].sort((a, b) => {
      const rank = (k) => (k === currentConversation ? 0 : k === null ? 2 : 1);
      return rank(a) - rank(b) || (a || 0) - (b || 0);
    });
    keys.forEach((key) => {
      const section = el("section", "forget-group");
      section.dataset.conversation = key === null ? "" : key;
      const title = el("h3");
      if (key === null) title.textContent = conversationLabel(null);
      else {
        const link = el("a", null, conversationLabel(key));
        link.href = "/c/" + key + "/";
        title.appendChild(link);
      }
      section.appendChild(title);
      const ul = el("ul");
      groups.get(key).forEach((item) => ul.appendChild(itemNode(item.entry, item.kind, byId)));
      section.appendChild(ul);
      els.items.appendChild(section);
    });
    if ((preview.related || []).length) els.items.appendChild(relatedList(preview.related));
    if (preview.derived && preview.derived.length) {
      // A derived record named by the request is erased; one that merely used it is rebuilt.
      const erased = preview.derived.filter((d) => d.action === "erase").length;
      const rebuilt = preview.derived.length - erased;
      if (erased && preview.mode === "all") {
        els.items.appendChild(el("p", "muted small-text", plural(erased, "fact or summary", "facts or summaries") + " will be erased with everything else, not rebuilt."));
      } else if (erased) {
        els.items.appendChild(el("p", "muted small-text", plural(erased, "fact or summary", "facts or summaries") + " you named will be erased, not rebuilt. The messages " + (erased === 1 ? "it was" : "they were") + " built from stay unless you forget them too."));
      }
      if (rebuilt) {
        els.items.appendChild(el("p", "muted small-text", plural(rebuilt, "fact or summary", "facts or summaries") + " that used it will be rebuilt from what remains (or removed if nothing remains)."));
      }
    }
    showTotals(preview);
    if (preview.expires_at) {
      const until = new Date(preview.expires_at);
      els.expiry.textContent = isNaN(until) ? "" : "This preview can be confirmed until " + until.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) + ".";
    }
    updateSummary();
  }

  // The preview as a picture: what it matched, and what was built from that.
  function drawGraph() {
    if (state.preview) window.DeLLMApi.graphInto(els.graphFigure, "/api/forget/" + encodeURIComponent(state.preview.request_id) + "/graph/");
  }

  // How many items a list of the preview holds: all of them, not only the page shown.
  function count(preview, list) {
    return preview.summary ? preview.summary[list] : preview[list].length;
  }

  // A large preview shows its first items: say what it holds in all, and offer the rest a page at a time.
  function showTotals(preview) {
    const summary = preview.summary;
    const paged = Object.keys(preview.next || {}).length > 0;
    els.summary.hidden = !summary || !paged;
    els.more.hidden = !paged;
    if (!summary || !paged) return;
    const kinds = Object.entries(summary.by_kind).map(([kind, n]) => {
      const names = KIND_NAMES[kind] || [kind, kind + "s"];
      return n.toLocaleString() + " " + (n === 1 ? names[0] : names[1]);
    });
    const conversations = summary.by_conversation.filter((c) => c.conversation !== null).length;
    const shown = preview.matched.length + preview.tainted.length;
    els.summary.textContent = "In all: " + kinds.join(", ") + (conversations ? " in " + plural(conversations, "conversation") : "") +
      ". Showing " + shown.toLocaleString() + " of " + (summary.matched + summary.tainted).toLocaleString() + ".";
  }

  async function showMore() {
    const preview = state.preview;
    const list = ["matched", "tainted", "related"].find((key) => preview && preview.next && preview.next[key]);
    if (!list) return;
    els.more.disabled = true;
    try {
      const page = await api("GET", preview.next[list]);
      if (state.preview !== preview) return; // another preview meanwhile
      preview[list] = preview[list].concat(page.results);
      if (page.next) preview.next[list] = page.next;
      else delete preview.next[list];
      render(preview);
    } catch (error) {
      setStatus(error.message, "error");
    } finally {
      els.more.disabled = false;
    }
  }

  function updateSummary() {
    const preview = state.preview;
    if (!preview) return;
    const matched = count(preview, "matched");
    const tainted = count(preview, "tainted");
    const kept = state.keep.size;
    const added = state.add.size;
    const total = matched + tainted - kept + added;
    let text = plural(matched, "item") + (matched === 1 ? " matches" : " match") + " your request";
    text += tainted ? ", and " + plural(tainted, "item") + " used " + (matched === 1 ? "it" : "them") : "";
    if (kept) text += " (" + kept + " kept)";
    if (added) text += "; you added " + plural(added, "related item") + ", with whatever used " + (added === 1 ? "it" : "them");
    text += ". " + (added ? "At least " : "") + plural(total, "item") + " will be deleted";
    els.counts.textContent = text + ".";
    const reasons = [];
    const limits = state.strictTainted === null || state.strictTainted > tainted; // a depth that changes nothing is no relaxation
    if (preview.depth !== null && preview.depth !== undefined && limits) {
      let limited = preview.depth === 0 ? "Only the matched items are deleted; nothing that used them." :
        "Only items within " + plural(preview.depth, "step") + " of a matched item are deleted.";
      if (state.strictTainted !== null && state.strictTainted > tainted) {
        limited += " " + plural(state.strictTainted - tainted, "item") + " further away that used it will be kept.";
      }
      reasons.push(limited);
    }
    if (kept) reasons.push("You keep " + plural(kept, "item") + " that used what you are forgetting.");
    els.warning.hidden = !reasons.length;
    els.warning.textContent = reasons.length ? "Relaxed deletion. " + RELAXED + " " + reasons.join(" ") : "";
    els.confirm.textContent = total ? "Forget " + plural(total, "item") : "Forget";
    els.confirm.disabled = total === 0;
  }

  function focusItem(id) {
    const line = els.items.querySelector('.forget-item[data-id="' + id + '"]');
    if (!line) return;
    line.scrollIntoView({ block: "nearest" });
    line.classList.remove("flash");
    void line.offsetWidth; // restart the animation
    line.classList.add("flash");
  }

  // --- confirm and manifest -----------------------------------------------------------------

  async function confirm() {
    const preview = state.preview;
    if (!preview || state.busy) return;
    state.busy = true;
    els.confirm.disabled = true;
    els.cancel.disabled = true;
    els.depth.disabled = true;
    setStatus("Forgetting…", "busy");
    try {
      let manifest = await api("POST", "/api/forget/" + preview.request_id + "/confirm/", { keep: [...state.keep], add: [...state.add] });
      if (manifest.status !== "completed") manifest = await followJob(manifest);
      if (!manifest) return;
      showManifest(manifest);
    } catch (error) {
      if (error.code === "expired") {
        setStatus("This preview expired before it was confirmed; nothing was deleted.", "error");
        const again = el("button", "small", "Preview again");
        again.type = "button";
        again.addEventListener("click", () => requestPreview(state.params, els.depth.value));
        els.status.append(" ", again);
      } else {
        setStatus(error.message, "error");
      }
      els.confirm.disabled = false;
    } finally {
      state.busy = false;
      els.cancel.disabled = false;
      els.depth.disabled = false;
    }
  }

  // A large deletion runs in the background: show its progress until its manifest is there.
  function showProgress(progress) {
    els.job.hidden = false;
    const stage = progress ? progress.stage : "queued";
    els.progress.value = progress && progress.fraction !== null ? progress.fraction : 0;
    const words = {
      queued: "Starting…",
      locking: "Collecting everything to forget…",
      wiping: "Forgetting " + (progress ? progress.done.toLocaleString() + " of " + progress.total.toLocaleString() + " items" : "") + "…",
      verifying: "Checking that nothing remains…",
      completed: "Done.",
    };
    els.progressLabel.textContent = words[stage] || "Forgetting…";
  }

  async function followJob(status) {
    setStatus("This is a large deletion; it runs in the background. You can keep this page open to follow it.", "busy");
    showProgress(status.progress);
    const url = "/api/forget/" + status.request_id + "/";
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, PROGRESS_POLL_MS));
      const data = await api("GET", url);
      if (data.status === "completed") {
        els.job.hidden = true;
        return data;
      }
      showProgress(data.progress);
      if (data.progress && data.progress.stage === "failed") {
        els.job.hidden = true;
        setStatus("The deletion stopped before it finished. Nothing was half-deleted; Forget again to finish it.", "error");
        els.confirm.disabled = false;
        return null;
      }
    }
  }

  function removeDeleted(ids) {
    const list = document.getElementById("messages");
    ids.forEach((id) => { const m = messageElement(id); if (m) m.remove(); });
    if (list && !list.querySelector(".message") && !document.getElementById("empty-hint")) {
      const hint = el("p", "muted empty", "Nothing left here. What you forgot is gone from every conversation.");
      hint.id = "empty-hint";
      list.appendChild(hint);
    }
  }

  // Conversation titles can quote a deleted message; the server retitles them, so refresh the list.
  async function refreshConversations() {
    let conversations;
    try { conversations = await api("GET", "/api/conversations/"); } catch (e) { return; }
    const byId = new Map(conversations.map((c) => [c.id, c]));
    document.querySelectorAll(".conversations li[data-conversation]").forEach((li) => {
      const id = Number(li.dataset.conversation);
      const found = byId.get(id);
      if (!found) { li.remove(); return; }
      li.querySelector("a").textContent = found.title || "New conversation";
    });
    if (currentConversation !== null) {
      const here = byId.get(currentConversation);
      const title = document.getElementById("conversation-title");
      if (!here) {
        document.dispatchEvent(new CustomEvent("dellm:conversation-deleted"));
        if (title) title.textContent = "Deleted conversation";
        const hint = document.getElementById("empty-hint");
        if (hint) hint.innerHTML = 'This conversation was deleted. <a href="/">Back to your conversations</a>.';
        const button = document.getElementById("delete-conversation");
        if (button) button.disabled = true;
        document.title = "Deleted conversation · DeLLM";
      } else {
        const name = here.title || "Conversation " + here.id;
        if (title) title.textContent = name;
        document.title = name + " · DeLLM";
      }
    }
  }

  // An excerpt with the tokens it shares with what was forgotten marked (spans come from the manifest).
  function marked(text, spans) {
    const node = el("div", "excerpt");
    let at = 0;
    [...spans].sort((a, b) => a[0] - b[0]).forEach(([start, end]) => {
      if (start < at || end > text.length) return;
      node.append(text.slice(at, start), el("mark", null, text.slice(start, end)));
      at = end;
    });
    node.append(text.slice(at));
    return node;
  }

  // Possible residue: surviving items that share a distinctive part of what was forgotten. Not deleted;
  // one click opens a new preview of them (with whatever used them).
  function residueList(residue, verification) {
    const section = el("section", "forget-residue");
    section.id = "forget-residue";
    const count = residue.length + (verification.possible_residue_more || 0);
    section.appendChild(el("p", "verification warn", "Possible residue: " + plural(count, "surviving item") +
      " still " + (count === 1 ? "shares" : "share") + " part of what you forgot."));
    const ul = el("ul");
    residue.forEach((entry) => {
      const li = el("li", "forget-item related");
      li.dataset.id = entry.id;
      const head = el("div", "item-head");
      const link = el(entry.conversation ? "a" : "span", "item-id", "#" + entry.id);
      if (entry.conversation) link.href = "/c/" + entry.conversation + "/#m" + entry.id;
      head.append(link, " ", el("span", "item-role", entry.kind || "item"), " ", el("span", "reason", (entry.why || []).join("; ")));
      li.appendChild(head);
      if (entry.excerpt) li.appendChild(marked(entry.excerpt, entry.spans || []));
      else li.appendChild(el("div", "excerpt muted", "(no longer stored)"));
      ul.appendChild(li);
    });
    section.appendChild(ul);
    if ((verification.possible_residue_titles || []).length) {
      section.appendChild(el("p", "muted small-text", "Conversation titles that share it: " +
        verification.possible_residue_titles.map((i) => "#" + i).join(", ") + "."));
    }
    const ids = residue.filter((e) => e.excerpt !== null).map((e) => e.id);
    if (ids.length) {
      const follow = el("button", "small", "Forget these too…");
      follow.type = "button";
      follow.id = "forget-residue-open";
      follow.addEventListener("click", () => openForResidue(ids));
      section.appendChild(follow);
    }
    return section;
  }

  function openForResidue(ids) {
    open({ heading: "Forget what remains", origin: "Items that still share part of what you forgot. Nothing is deleted until you confirm." });
    requestPreview({ mode: "ids", message_ids: ids.map(Number) });
  }

  function showManifest(manifest) {
    clearHighlights();
    clearChatStatus();
    removeDeleted(manifest.deleted_ids || []);
    els.preview.hidden = true;
    els.search.hidden = true;
    els.origin.hidden = true;
    els.query.value = "";
    setStatus("");
    state.preview = null;
    els.heading.textContent = "Forgotten";
    const deleted = manifest.deleted || {};
    const box = els.result;
    box.textContent = "";
    box.hidden = false;
    const gone = [plural(deleted.messages || 0, "message")];
    if (deleted.facts) gone.push(plural(deleted.facts, "fact"));
    if (deleted.summaries) gone.push(plural(deleted.summaries, "summary", "summaries"));
    if (deleted.conversations) gone.push(plural(deleted.conversations, "conversation"));
    box.appendChild(el("p", "done", "Done. Deleted " + gone.join(", ") + "."));
    box.appendChild(details([["store-counts", "Also removed from the stores: " + [
      plural(deleted.embeddings || 0, "embedding"), plural(deleted.edges || 0, "provenance edge")].join(", ") + "."]]));
    if (manifest.rebuilt && manifest.rebuilt.length) {
      // Derived records (summaries, facts) in the deleted set: erased when named, else rebuilt
      // from their surviving sources (pending until the rebuild job has run).
      const labels = { erased: "erased", dropped: "removed (nothing left to rebuild from)", pending: "being rebuilt from what remains", done: "rebuilt from what remains", failed: "could not be rebuilt" };
      const byStatus = {};
      manifest.rebuilt.forEach((r) => { byStatus[r.status] = (byStatus[r.status] || 0) + 1; });
      const parts = Object.keys(byStatus).map((status) => byStatus[status] + " " + (labels[status] || status));
      box.appendChild(el("p", "muted", "Facts and summaries: " + parts.join(", ") + "."));
    }
    const verification = manifest.verification || {};
    const residual = verification.residual_hits || 0;
    const verdict = el("p", "verification " + (residual === 0 ? "ok" : "warn"));
    verdict.textContent = residual === 0
      ? "Verification: no trace found in " + plural((verification.checked_stores || []).length, "store") + "."
      : "Verification: " + plural(residual, "possible trace") + " remain" + (residual === 1 ? "s" : "") +
        ((verification.residual_ids || []).length ? " (" + verification.residual_ids.map((i) => "#" + i).join(", ") + ")" : "") + ".";
    box.appendChild(verdict);
    if (residual && (verification.residual_ids || []).length) {
      const review = el("button", "small", "Review them");
      review.type = "button";
      review.addEventListener("click", () => {
        open({ heading: "Forget what remains", origin: "Items that still looked like what you forgot." });
        requestPreview({ mode: "ids", message_ids: verification.residual_ids });
      });
      box.appendChild(review);
    }
    const residue = verification.possible_residue || [];
    if (residue.length) box.appendChild(residueList(residue, verification));
    if (manifest.strict === false) {
      const parts = [];
      if (manifest.depth !== null && manifest.depth !== undefined) parts.push("depth limited to " + manifest.depth);
      if ((manifest.kept || []).length) parts.push(plural(manifest.kept.length, "item") + " kept");
      box.appendChild(el("p", "forget-warning", "Relaxed deletion (" + parts.join(", ") + "). " + RELAXED));
    }
    const history = el("p");
    const link = el("a", "history-link", "See this deletion in your Deletion history");
    link.href = "/forget/history/" + manifest.request_id + "/";
    history.appendChild(link);
    box.appendChild(history);
    if (manifest.rebuilt && manifest.rebuilt.length) {
      const memory = el("p");
      const memoryLink = el("a", "memory-link", "See your memory" + (manifest.rebuilt.some((r) => r.status === "pending") ? " being rebuilt" : ""));
      memoryLink.href = "/memory/?after=" + encodeURIComponent(manifest.request_id);
      memory.appendChild(memoryLink);
      box.appendChild(memory);
    }
    const done = el("button", "small", "Close");
    done.type = "button";
    done.id = "forget-done";
    done.addEventListener("click", close);
    box.appendChild(done);
    refreshConversations();
    document.dispatchEvent(new CustomEvent("dellm:forget-done", { detail: { manifest: manifest } }));
  }

  // --- wiring ------------------------------------------------------------------------------

  els.search.addEventListener("submit", (event) => {
    event.preventDefault();
    const query = els.query.value.trim();
    if (!query) { setStatus("Type what I should forget.", "error"); els.query.focus(); return; }
    state.keep = new Set();
    state.strictTainted = null;
    requestPreview({ mode: els.mode.value, query: query });
  });
  els.depth.addEventListener("change", () => {
    if (state.params) requestPreview(state.params, els.depth.value);
  });
  els.confirm.addEventListener("click", confirm);
  els.more.addEventListener("click", showMore);
  els.graph.addEventListener("toggle", () => { if (els.graph.open && !els.graphFigure.firstChild) drawGraph(); });
  els.cancel.addEventListener("click", close);
  $("forget-close").addEventListener("click", close);
  const opener = $("forget-open");
  if (opener) opener.addEventListener("click", openSearch);
  const deleteConversation = $("delete-conversation");
  if (deleteConversation && currentConversation !== null) {
    deleteConversation.addEventListener("click", () => openForConversation(currentConversation));
  }
  document.addEventListener("click", (event) => {
    const action = event.target.closest(".msg-forget");
    if (action) { event.preventDefault(); openForMessage(action.dataset.forget); }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !panel.hidden && !state.busy) close();
  });

  // A link such as /c/<id>/?forget=<request_id> (given to OpenAI-compatible clients, which
  // cannot show this panel) opens the stored preview, or the manifest once confirmed.
  const linked = new URLSearchParams(location.search).get("forget");
  if (linked) {
    fetch("/api/forget/" + encodeURIComponent(linked) + "/", { headers: { Accept: "application/json" } })
      .then((response) => response.json().then((data) => ({ ok: response.ok, data: data })))
      .then(({ ok, data }) => {
        if (!ok) return;
        if (data.status === "completed") showManifest(data);
        else showPreview(data, { origin: "link" });
      });
  }

  // The deletion history page offers a deletion's possible residue as a follow-up.
  document.querySelectorAll("[data-residue-ids]").forEach((button) => {
    button.addEventListener("click", () => openForResidue(JSON.parse(button.dataset.residueIds)));
  });

  window.DeLLMForget = {
    showPreview: showPreview,
    showManifest: showManifest,
    isOpen: () => !panel.hidden,
    focusItem: focusItem,
    openSearch: openSearch,
    openForMessage: openForMessage,
    openForItems: openForItems,
    openForConversation: openForConversation,
    openForAll: openForAll,
  };
})();
