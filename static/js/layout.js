// DeLLM page chrome on every page: the folding menu of narrow screens, the conversation sidebar
// (collapsed on wide screens, an overlay on narrow ones), Escape to close whichever is open, and a
// confirmation before a form that cannot be undone.
(function () {
  "use strict";
  const narrow = window.matchMedia("(max-width: 760px)");

  const navToggle = document.getElementById("nav-toggle");
  const nav = document.getElementById("site-nav");
  function setNav(open) {
    nav.classList.toggle("open", open);
    navToggle.setAttribute("aria-expanded", String(open));
  }
  navToggle.addEventListener("click", () => setNav(!nav.classList.contains("open")));

  const layout = document.getElementById("layout");
  const sidebarToggle = document.getElementById("sidebar-toggle");
  const STORED = "dellm.sidebar";

  function sidebarShown() {
    return narrow.matches ? layout.classList.contains("sidebar-open") : !layout.classList.contains("sidebar-collapsed");
  }

  function setSidebar(show) {
    if (narrow.matches) layout.classList.toggle("sidebar-open", show);
    else {
      layout.classList.toggle("sidebar-collapsed", !show);
      try { localStorage.setItem(STORED, show ? "shown" : "collapsed"); } catch (e) { /* private mode */ }
    }
    sidebarToggle.setAttribute("aria-expanded", String(show));
    if (show && narrow.matches) {
      const first = layout.querySelector(".sidebar button, .sidebar a");
      if (first) first.focus();
    }
  }

  if (layout && sidebarToggle) {
    let stored = null;
    try { stored = localStorage.getItem(STORED); } catch (e) { stored = null; }
    if (stored === "collapsed") layout.classList.add("sidebar-collapsed");
    sidebarToggle.setAttribute("aria-expanded", String(sidebarShown()));
    sidebarToggle.addEventListener("click", () => setSidebar(!sidebarShown()));
    document.getElementById("sidebar-backdrop").addEventListener("click", () => setSidebar(false));
    narrow.addEventListener("change", () => {
      layout.classList.remove("sidebar-open");
      sidebarToggle.setAttribute("aria-expanded", String(sidebarShown()));
    });
  }

  // Forms that undo something at once (revoking a token) ask first.
  document.querySelectorAll("form[data-confirm]").forEach((form) => {
    form.addEventListener("submit", (event) => {
      if (!window.confirm(form.dataset.confirm)) event.preventDefault();
    });
  });

  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    if (nav.classList.contains("open")) { setNav(false); navToggle.focus(); }
    if (layout && sidebarToggle && narrow.matches && layout.classList.contains("sidebar-open")) {
      setSidebar(false);
      sidebarToggle.focus();
    }
  });
})();
