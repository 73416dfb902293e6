// pytest-qbench HTML report: filters, search, sort and pages over the embedded data.
// Plain JavaScript, no framework. Every text from the data goes in with textContent; the only
// links built from data are attachment paths the renderer made relative and percent-encoded,
// checked again here (SAFE_HREF).
"use strict";
(function () {
  const PAGE_SIZE = 100;
  const SAFE_HREF = /^(?!\/)[A-Za-z0-9._~%\/-]+$/;
  const SAFE_IMG = /^data:image\/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+\/=]+$/;
  const RANK = { failed: 0, error: 1, xpassed: 2, xfailed: 3, skipped: 4, passed: 5 };

  const data = JSON.parse(document.getElementById("qbench-data").textContent);
  const count = data.o.length;
  const rowsEl = document.getElementById("rows");
  const searchEl = document.getElementById("search");
  const sortEl = document.getElementById("sort");
  const shownEl = document.getElementById("shown-count");
  const pageInfo = document.getElementById("page-info");
  const prevEl = document.getElementById("prev");
  const nextEl = document.getElementById("next");
  const buttons = Array.from(document.querySelectorAll("#filters button[data-outcome]"));
  const flaky = new Set(data.fl);

  const state = { outcomes: new Set(), query: "", sort: "status", page: 0 };
  let haystack = null;
  let shown = [];

  function nodeid(i) {
    return data.files[data.f[i]] + data.r[i];
  }

  function message(i) {
    return data.m[i] || "";
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function millis(ms) {
    if (ms < 1) return "< 1 ms";
    if (ms < 1000) return ms + " ms";
    const s = ms / 1000;
    return s < 60 ? s.toFixed(2) + " s" : Math.floor(s / 60) + "m " + Math.round(s % 60) + "s";
  }

  // --- the view in the URL fragment ---------------------------------------------------------

  function readHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    const names = (params.get("o") || "").split(",").filter((n) => n in RANK);
    state.outcomes = new Set(names);
    state.query = params.get("q") || "";
    state.sort = ["status", "duration", "name"].includes(params.get("s")) ? params.get("s") : "status";
    state.page = Math.max(0, (parseInt(params.get("p") || "1", 10) || 1) - 1);
  }

  function writeHash() {
    const params = new URLSearchParams();
    if (state.outcomes.size) params.set("o", Array.from(state.outcomes).join(","));
    if (state.query) params.set("q", state.query);
    if (state.sort !== "status") params.set("s", state.sort);
    if (state.page) params.set("p", String(state.page + 1));
    const hash = params.toString();
    history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search);
  }

  // --- filtering, searching, sorting --------------------------------------------------------

  function buildHaystack() {
    haystack = new Array(count);
    for (let i = 0; i < count; i++) haystack[i] = (nodeid(i) + "\n" + message(i) + (data.k[i] ? "\n" + data.k[i] : "")).toLowerCase();
  }

  function compute() {
    const wanted = state.outcomes.size ? new Set(Array.from(state.outcomes, (n) => data.oc.indexOf(n))) : null;
    const query = state.query.trim().toLowerCase();
    if (query && haystack === null) buildHaystack();
    const out = [];
    for (const i of order(state.sort)) {
      if (wanted && !wanted.has(data.o[i]) && !(data.a[i] && data.a[i].some((c) => wanted.has(c)))) continue;
      if (query && haystack[i].indexOf(query) < 0) continue;
      out.push(i);
    }
    shown = out;
  }

  // Every row in each sort order, sorted once: a search or a filter then only walks it.
  const orders = {};
  function order(mode) {
    if (orders[mode]) return orders[mode];
    const all = Array.from({ length: count }, (_, i) => i);
    if (mode === "duration") {
      all.sort((a, b) => data.d[b] - data.d[a] || a - b);
    } else if (mode === "name") {
      const names = all.map(nodeid);
      all.sort((a, b) => (names[a] < names[b] ? -1 : names[a] > names[b] ? 1 : a - b));
    } else {
      const rank = data.oc.map((name) => RANK[name]);
      all.sort((a, b) => rank[data.o[a]] - rank[data.o[b]] || a - b);
    }
    orders[mode] = all;
    return all;
  }

  // --- rows ---------------------------------------------------------------------------------

  function renderRows() {
    const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
    state.page = Math.min(state.page, pages - 1);
    const start = state.page * PAGE_SIZE;
    const fragment = document.createDocumentFragment();
    for (const i of shown.slice(start, start + PAGE_SIZE)) fragment.appendChild(row(i));
    rowsEl.replaceChildren(fragment);
    shownEl.textContent = String(shown.length);
    pageInfo.textContent = shown.length
      ? "page " + (state.page + 1) + " of " + pages + " (" + (start + 1) + "–" + Math.min(shown.length, start + PAGE_SIZE) + ")"
      : "no test matches";
    prevEl.disabled = state.page === 0;
    nextEl.disabled = state.page >= pages - 1;
    for (const b of buttons) {
      const on = b.dataset.outcome === "all" ? state.outcomes.size === 0 : state.outcomes.has(b.dataset.outcome);
      b.setAttribute("aria-pressed", on ? "true" : "false");
    }
  }

  function row(i) {
    const outcome = data.oc[data.o[i]];
    const li = el("li", "row o-" + outcome);
    const id = nodeid(i);
    li.dataset.nodeid = id;
    li.dataset.outcome = outcome;
    const details = el("details");
    const summary = el("summary");
    summary.appendChild(el("span", "badge o-" + outcome, outcome));
    summary.appendChild(el("code", "nodeid", id));
    if (flaky.has(i)) summary.appendChild(el("span", "tag", "flaky"));
    if (data.k[i]) summary.appendChild(el("span", "tag key", data.k[i]));
    summary.appendChild(el("span", "time", millis(data.d[i])));
    const msg = message(i);
    if (msg) summary.appendChild(el("div", "msg", msg));
    details.appendChild(summary);
    details.addEventListener("toggle", () => {
      if (details.open && !details.querySelector(".detail")) details.appendChild(detail(i));
    });
    li.appendChild(details);
    return li;
  }

  function section(parent, title) {
    const box = el("div", "part");
    box.appendChild(el("h4", null, title));
    parent.appendChild(box);
    return box;
  }

  function pre(parent, text, className) {
    parent.appendChild(el("pre", className || null, text));
  }

  function collapsed(parent, title, text) {
    const d = el("details", "sub");
    d.appendChild(el("summary", null, title));
    pre(d, text);
    parent.appendChild(d);
  }

  function failure(parent, f, title) {
    const box = section(parent, title);
    const head = el("p", "where");
    head.appendChild(el("strong", null, f.type));
    head.appendChild(document.createTextNode(" in " + f.phase + " at "));
    head.appendChild(el("code", null, f.where));
    box.appendChild(head);
    pre(box, f.msg, "message");
    if (f.ex) collapsed(box, "Falsifying example", f.ex);
    if (f.tb) collapsed(box, "Traceback", f.tb);
  }

  function detail(i) {
    const x = data.x[i] || {};
    const box = el("div", "detail");
    if (x.hist) box.appendChild(el("p", "history h-" + x.hist.status.replace(/\s+/g, "-"), "History: " + x.hist.summary));
    if (x.fail) failure(box, x.fail, "Failure");
    if (x.teardown) failure(box, x.teardown, "Teardown failure");
    if (x.reason && !x.fail) box.appendChild(el("p", "reason", "Reason: " + x.reason));
    if (x.reruns) {
      const part = section(box, "Reruns: " + x.reruns);
      const ul = el("ul");
      for (const [outcome, seconds, line] of x.attempts) ul.appendChild(el("li", null, outcome + " in " + seconds.toFixed(2) + " s" + (line ? ": " + line : "")));
      part.appendChild(ul);
    }
    if (x.sub) {
      const part = section(box, "Subtests");
      const ul = el("ul");
      for (const [desc, outcome, line] of x.sub) ul.appendChild(el("li", "o-" + outcome, outcome + " " + desc + (line ? ": " + line : "")));
      part.appendChild(ul);
    }
    if (x.out) {
      for (const name of ["stdout", "stderr", "log"]) if (x.out[name]) collapsed(box, "Captured " + name, x.out[name]);
    }
    if (x.agent) agent(box, x.agent);
    if (x.meta || x.props || x.marks) metadata(box, x);
    if (x.att) attachments(box, x.att);
    if (!box.childNodes.length) box.appendChild(el("p", "quiet", "Nothing more was recorded for this test."));
    return box;
  }

  function table(parent, head, rows) {
    const t = el("table");
    const tr = el("tr");
    for (const h of head) tr.appendChild(el("th", null, h));
    t.appendChild(el("thead")).appendChild(tr);
    const body = el("tbody");
    for (const cells of rows) {
      const r = el("tr");
      for (const c of cells) r.appendChild(el("td", null, c));
      body.appendChild(r);
    }
    t.appendChild(body);
    parent.appendChild(t);
  }

  function text(value) {
    return typeof value === "string" ? value : JSON.stringify(value);
  }

  function agent(parent, a) {
    const part = section(parent, "Agent");
    if (a.input) collapsed(part, "Input", a.input);
    if (a.response !== null && a.response !== undefined) {
      part.appendChild(el("p", null, "Response:"));
      pre(part, a.response, "response");
    }
    if ((a.tools && a.tools.length) || a.expected) {
      const p = el("p", a.matched === false ? "bad" : null);
      p.textContent = "Tools called: " + ((a.tools || []).map(toolName).join(", ") || "none") +
        (a.expected ? " · expected: " + a.expected.map(toolName).join(", ") : "") +
        (a.matched === true ? " · match" : a.matched === false ? " · no match" : "");
      part.appendChild(p);
    }
    if (a.metrics.length) {
      table(part, ["Metric", "Score", "Threshold", "Result", "Note"], a.metrics.map(([name, score, threshold, passed, skipped, note]) => [
        name,
        score === null ? "–" : Number(score.toPrecision(3)),
        threshold === null ? "–" : threshold,
        skipped ? "skipped" : passed ? "passed" : "failed",
        note,
      ]));
    }
  }

  function toolName(call) {
    return call && typeof call === "object" && "name" in call ? String(call.name) : text(call);
  }

  function metadata(parent, x) {
    const part = section(parent, "Metadata");
    const rows = [];
    for (const [k, v] of Object.entries(x.meta || {})) {
      if (k === "steps") continue;
      rows.push([k, Array.isArray(v) ? v.join(", ") : text(v)]);
    }
    for (const [k, v] of x.props || []) rows.push([k, text(v)]);
    if (x.marks) rows.push(["markers", x.marks.join(", ")]);
    table(part, ["Field", "Value"], rows);
    if (x.meta && x.meta.steps) table(part, ["Step", "Action", "Expected"], x.meta.steps.map(([n, act, exp]) => [n, act, exp || ""]));
  }

  function attachments(parent, list) {
    const part = section(parent, "Attachments");
    for (const a of list) {
      const item = el("div", "attachment");
      const label = a.name + " (" + (a.mime || "unknown type") + ", " + a.size + " bytes)";
      const noted = typeof a.note === "string" ? label + " · " + a.note : label; // truncated
      if (typeof a.img === "string" && SAFE_IMG.test(a.img)) {
        item.appendChild(el("p", null, noted));
        const img = el("img");
        img.alt = a.name;
        img.src = a.img;
        item.appendChild(img);
      } else if (typeof a.text === "string") {
        collapsed(item, noted, a.text);
      } else if (typeof a.href === "string" && SAFE_HREF.test(a.href)) {
        const link = el("a", null, noted);
        link.href = a.href;
        link.setAttribute("download", "");
        item.appendChild(link);
      } else if (typeof a.stored === "string") {
        item.appendChild(el("p", "unlinked", noted + ": not linked, a browser would run its scripts; stored at " + a.stored + " (open it in an editor)"));
      } else {
        item.appendChild(el("p", "quiet not-stored", label + ": not stored" + (typeof a.note === "string" ? " (" + a.note + ")" : " with this report")));
      }
      part.appendChild(item);
    }
  }

  // --- wiring -------------------------------------------------------------------------------

  function update(resetPage) {
    if (resetPage) state.page = 0;
    compute();
    renderRows();
    writeHash();
  }

  for (const b of buttons) {
    b.addEventListener("click", () => {
      const name = b.dataset.outcome;
      if (name === "all") state.outcomes.clear();
      else if (state.outcomes.has(name)) state.outcomes.delete(name);
      else state.outcomes.add(name);
      update(true);
    });
  }
  let timer = 0;
  searchEl.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      state.query = searchEl.value;
      update(true);
    }, 30);
  });
  sortEl.addEventListener("change", () => {
    state.sort = sortEl.value;
    update(true);
  });
  prevEl.addEventListener("click", () => {
    state.page -= 1;
    update(false);
    rowsEl.scrollIntoView();
  });
  nextEl.addEventListener("click", () => {
    state.page += 1;
    update(false);
    rowsEl.scrollIntoView();
  });
  window.addEventListener("hashchange", () => {
    readHash();
    searchEl.value = state.query;
    sortEl.value = state.sort;
    compute();
    renderRows();
  });

  for (const th of document.querySelectorAll("table.sortable th[data-sort]")) {
    th.addEventListener("click", () => sortTable(th));
  }

  function sortTable(th) {
    const tbody = th.closest("table").tBodies[0];
    const index = Array.from(th.parentNode.children).indexOf(th);
    const numeric = th.dataset.sort === "num";
    const descending = th.getAttribute("aria-sort") !== "descending";
    for (const other of th.parentNode.children) other.removeAttribute("aria-sort");
    th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    const key = (tr) => {
      const cell = tr.children[index];
      return numeric ? parseFloat(cell.dataset.value || cell.textContent) : cell.textContent;
    };
    const rows = Array.from(tbody.rows);
    rows.sort((a, b) => {
      const x = key(a), y = key(b);
      const order = x < y ? -1 : x > y ? 1 : 0;
      return descending ? -order : order;
    });
    tbody.replaceChildren(...rows);
  }

  readHash();
  searchEl.value = state.query;
  sortEl.value = state.sort;
  compute();
  renderRows();
  // The search text of every row, built once the first rows show, so that no search waits for it.
  setTimeout(() => {
    if (haystack === null) buildHaystack();
  }, 0);
})();
