// The review page's script (judgeprobe review): served beside the page as /review.js, so the
// page's Content-Security-Policy allows no inline script. Every string from the server goes
// into the document as text (textContent), never as markup.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const ACTIONS = {accept: "accepted", reject: "rejected", edit: "edited"};
  const LABELS = {"1": "response 1 is better", "2": "response 2 is better", tie: "tie"};
  const SHORT = {"1": "1 better", "2": "2 better", tie: "tie"};
  const state = {texts: [], pairs: [], pairsError: "", tab: "texts"};

  function el(tag, text, cls) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }
  function say(message) { $("status").textContent = message || ""; }

  async function api(path, body) {
    const init = {credentials: "same-origin", headers: {Accept: "application/json"}};
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const reply = await fetch(path, init);
    let data = null;
    try { data = await reply.json(); } catch (e) { data = null; }
    if (!reply.ok) throw new Error((data && data.error) || ("HTTP " + reply.status));
    return data;
  }

  // One list view, shared by both tabs: its records (each with an ``id``), the current one,
  // a click or j/k to move, and the current line kept in sight. ``show`` draws the detail of
  // the current record; ``pool`` is where the current record is looked up (the list itself,
  // unless the tab filters a larger set).
  function listView(listId, line, show, pool) {
    const view = {items: [], current: null};
    view.render = function (items) {
      view.items = items;
      $(listId).replaceChildren(...items.map((record, i) => {
        const li = line(record, i);
        li.dataset.id = record.id;
        li.addEventListener("click", () => view.select(record.id));
        return li;
      }));
    };
    view.highlight = function () {
      for (const li of $(listId).children) li.classList.toggle("current", li.dataset.id === view.current);
      const li = $(listId).querySelector("li.current");
      if (li) li.scrollIntoView({block: "nearest"});
    };
    view.record = () => (pool ? pool() : view.items).find((r) => r.id === view.current) || null;
    view.holds = (id) => view.items.some((r) => r.id === id);
    view.select = function (id) { view.current = id; show(); };
    view.after = (record) => view.items[view.items.indexOf(record) + 1];
    view.step = function (by) {
      const at = view.items.findIndex((r) => r.id === view.current);
      const next = view.items[Math.min(Math.max(at + by, 0), view.items.length - 1)];
      if (next) view.select(next.id);
    };
    return view;
  }

  // ---- generated texts ----
  // A text of the items file (a candidate set's rewrite) is every condition's: condition "".
  function conditionOf(t) { return t.condition ? String(t.condition) : "(items file)"; }
  function checkOf(t) {
    const passed = t.check ? t.check.passed : null;
    return passed === true ? "passed" : passed === false ? "failed" : "unchecked";
  }
  function keep(t) {
    for (const select of document.querySelectorAll(".filters select[data-key]")) {
      const want = select.value, key = select.dataset.key;
      if (!want) continue;
      if (key === "check" && checkOf(t) !== want) return false;
      if (key === "decision" && (t.decision ? t.decision.action : "none") !== want) return false;
      if (key === "verdict" && !(t.verdicts || []).some((v) => v.verdict === want)) return false;
      if (key === "condition" && conditionOf(t) !== want) return false;
      if (key === "kind" && String(t.kind) !== want) return false;
    }
    return true;
  }
  function fillSelect(select, values) {
    const counts = new Map();
    for (const v of values) counts.set(v, (counts.get(v) || 0) + 1);
    for (const v of Array.from(counts.keys()).sort()) {
      const option = el("option", v + " (" + counts.get(v) + ")");
      option.value = v;
      select.appendChild(option);
    }
  }
  function progress() {
    if (state.tab === "labels") {
      const done = state.pairs.filter((p) => p.label).length;
      $("progress").textContent = "labelled " + done + " of " + state.pairs.length;
    } else {
      const done = state.texts.filter((t) => t.decision).length;
      $("progress").textContent = "reviewed " + done + " of " + state.texts.length;
    }
  }
  function mark(decision) {
    const action = decision ? decision.action : "none";
    return el("span", decision ? ACTIONS[action] || action : "to review", "mark " + action);
  }
  function textLine(t) {
    const li = el("li");
    li.append(mark(t.decision), el("b", conditionOf(t)), " · ", el("span", t.kind));
    li.appendChild(el("div", t.item_id + " · check " + checkOf(t), "sub"));
    return li;
  }
  const texts = listView("list", textLine, showText, () => state.texts);

  function renderTexts() {
    const before = texts.current;
    texts.render(state.texts.filter(keep));
    $("shown").textContent = texts.items.length + " of " + state.texts.length + " shown";
    // The detail is redrawn only when the current text left the list: a reply arriving while
    // the reviewer types a note or an edit must not wipe it.
    if (texts.holds(before)) texts.highlight();
    else texts.select(texts.items.length ? texts.items[0].id : null);
  }
  function diffInto(box, ops, side) {
    // side "source": equal and deleted runs; side "generated": equal and inserted runs.
    box.replaceChildren();
    for (const op of ops) {
      if (op.op === "equal") box.appendChild(document.createTextNode(op.text));
      else if (op.op === "delete" && side === "source") box.appendChild(el("del", op.text));
      else if (op.op === "insert" && side === "generated") box.appendChild(el("ins", op.text));
    }
  }
  function describe(decision) {
    if (!decision) return "Not reviewed yet.";
    const what = ACTIONS[decision.action] || decision.action;
    let line = what.charAt(0).toUpperCase() + what.slice(1) + " by " + decision.who + " at " + decision.when;
    if (decision.note) line += " — " + decision.note;
    return line;
  }
  function showText() {
    const t = texts.record();
    $("texts-empty").hidden = t !== null;
    $("texts-empty").textContent = state.texts.length
      ? "No generated text matches these filters."
      : "This run judged no generated text: its conditions show the items' own texts.";
    $("text-body").hidden = t === null;
    texts.highlight();
    if (t === null) return;
    $("t-title").textContent = conditionOf(t) + " · " + t.kind;
    // Where the judge saw it (when the server says): which candidate's place, or the document.
    const side = t.where === "A" || t.where === "B" ? t.where : null;
    const place = side ? " · shown as " + side + " (candidate " + (side === "A" ? 1 : 2) + "'s place)"
      : t.where === "document" ? " · inside the document" : "";
    $("t-meta").textContent = "item " + t.item_id + place + " · id " + t.id;
    const check = checkOf(t);
    $("t-check").textContent = check === "unchecked" ? "not checked" : "check " + check;
    $("t-check").className = "badge " + {passed: "pass", failed: "fail", unchecked: "unknown"}[check];
    $("t-check-detail").textContent = t.check && t.check.detail ? t.check.detail : "";
    $("t-text-head").textContent = t.original !== t.text ? "Edited" : "Generated";
    const ops = t.diff && t.diff.length ? t.diff : null;
    if (ops) {
      diffInto($("t-original"), ops, "source");
      diffInto($("t-text"), ops, "generated");
    } else {
      $("t-original").textContent = t.source;
      $("t-text").textContent = t.text;
    }
    const d = t.decision;
    $("t-decision").textContent = describe(d);
    $("t-decision").className = "decision " + (d ? d.action : "");
    if (t.original !== t.text) {
      $("t-decision").append(el("h3", "As generated"), el("div", t.original, "text"));
    }
    $("note").value = d && d.note ? d.note : "";
    closeEditor();
    const rows = (t.verdicts || []).map((v) => {
      const tr = el("tr");
      const picked = side !== null && v.verdict === side ? " (this text)" : "";
      tr.append(el("td", v.judge), el("td", v.protocol), el("td", v.verdict + picked), el("td", v.explanation, "ex"));
      return tr;
    });
    $("t-verdicts").tBodies[0].replaceChildren(...rows);
    $("t-verdicts").hidden = rows.length === 0;
    $("t-no-verdicts").hidden = rows.length > 0;
  }
  async function decide(action, text) {
    // Moves on at once (keys can run ahead of the server); a refusal comes back to the text.
    const t = texts.record();
    if (!t) return;
    const body = {id: t.id, action: action, note: $("note").value};
    if (action === "edit") body.text = text;
    const next = texts.after(t);
    if (next) texts.select(next.id);
    const edited = action === "edit" || (t.decision && t.decision.action === "edit");
    try {
      t.decision = (await api("/api/decision", body)).decision;
      say("");
      if (edited) await refresh(t);
    } catch (e) {
      say("Not saved (" + conditionOf(t) + " on " + t.item_id + "): " + e.message);
      texts.select(t.id);
      if (action === "edit") {  // back to the box, the reviewer's text in it
        openEditor();
        $("edit-text").value = text;
      }
      return;
    }
    renderTexts();
    if (texts.current === t.id) showText();  // the last text: it stays, with its decision
    progress();
  }
  async function refresh(t) {
    // The server words the diff: after an edit (or a decision replacing one) ask for the text.
    const found = ((await api("/api/texts")).texts || []).find((x) => x.id === t.id);
    if (found) Object.assign(t, found);
  }
  function openEditor() {
    const t = texts.record();
    if (!t) return;
    $("editor").hidden = false;
    $("edit-text").value = t.text;  // the edited text once edited
    $("edit-text").focus();
  }
  function closeEditor() { $("editor").hidden = true; }
  function saveEdit() {
    const text = $("edit-text").value;
    if (!text.trim()) { say("An edited text cannot be empty: reject the text instead."); return; }
    decide("edit", text);
  }

  // ---- human labels ----
  function pairLine(p, i) {
    const li = el("li");
    const picked = p.label ? SHORT[p.label.preferred] || p.label.preferred : "to label";
    li.append(el("span", picked, "mark " + (p.label ? "accept" : "none")), "Pair " + (i + 1));
    return li;
  }
  const pairs = listView("pair-list", pairLine, showPair);

  function renderPairs() {
    pairs.render(state.pairs);
    if (pairs.current === null && state.pairs.length) pairs.select(state.pairs[0].id);
    else pairs.highlight();
  }
  function showPair() {
    const p = pairs.record();
    $("pairs-empty").hidden = p !== null;
    $("pairs-empty").textContent = state.pairsError
      ? "Could not load the pairs: " + state.pairsError
      : "No pairs to label in this run.";
    $("pair-body").hidden = p === null;
    pairs.highlight();
    if (p === null) return;
    const i = state.pairs.indexOf(p);
    $("p-title").textContent = "Pair " + (i + 1) + " of " + state.pairs.length;
    $("p-context").textContent = p.context;
    $("p-response-1").textContent = p.response_1;
    $("p-response-2").textContent = p.response_2;
    const l = p.label;
    $("p-label").textContent = l
      ? "Labelled " + (LABELS[l.preferred] || l.preferred) + " by " + l.who + " at " + l.when + (l.note ? " — " + l.note : "")
      : "Not labelled yet.";
    $("label-note").value = l && l.note ? l.note : "";
    for (const b of document.querySelectorAll(".pick button")) {
      b.classList.toggle("on", !!l && b.dataset.preferred === l.preferred);
    }
  }
  async function label(preferred) {
    const p = pairs.record();
    if (!p) return;
    const body = {id: p.id, preferred: preferred, note: $("label-note").value};
    pairs.step(1);
    try {
      p.label = (await api("/api/label", body)).label;
      say("");
    } catch (e) {
      say("Not saved (pair " + (state.pairs.indexOf(p) + 1) + "): " + e.message);
      pairs.select(p.id);
      return;
    }
    renderPairs();
    if (pairs.current === p.id) showPair();
    progress();
  }

  // ---- tabs, keys, loading ----
  function tab(name) {
    state.tab = name;
    $("texts-view").hidden = name !== "texts";
    $("labels-view").hidden = name !== "labels";
    $("keys-texts").hidden = name !== "texts";
    $("keys-labels").hidden = name !== "labels";
    for (const b of document.querySelectorAll("nav button")) b.classList.toggle("on", b.dataset.tab === name);
    if (location.hash !== "#" + name) history.replaceState(null, "", "#" + name);
    progress();
  }
  const VIEWS = {texts: texts, labels: pairs};
  const KEYS = {
    texts: {a: () => decide("accept"), r: () => decide("reject"), e: openEditor},
    labels: {"1": () => label("1"), "2": () => label("2"), t: () => label("tie")},
  };
  document.addEventListener("keydown", (e) => {
    const typing = e.target.closest("input, textarea, select");
    if (e.target.id === "edit-text") {
      if (e.key === "Escape") { closeEditor(); e.preventDefault(); }
      else if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { saveEdit(); e.preventDefault(); }
      return;
    }
    if (typing) {
      if (e.key === "Escape") e.target.blur();
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    let act = null;
    if (e.key === "j") act = () => VIEWS[state.tab].step(1);
    else if (e.key === "k") act = () => VIEWS[state.tab].step(-1);
    else if (e.key === "?") act = () => { $("help").hidden = !$("help").hidden; };
    else if (e.key === "Escape") act = () => { $("help").hidden = true; };
    else if (e.key === "n") act = () => $(state.tab === "labels" ? "label-note" : "note").focus();
    else act = KEYS[state.tab][e.key] || null;
    if (act) { e.preventDefault(); act(); }
  });
  for (const select of document.querySelectorAll(".filters select")) select.addEventListener("change", renderTexts);
  for (const b of document.querySelectorAll("nav button")) b.addEventListener("click", () => tab(b.dataset.tab));
  $("accept").addEventListener("click", () => decide("accept"));
  $("reject").addEventListener("click", () => decide("reject"));
  $("edit").addEventListener("click", openEditor);
  $("save-edit").addEventListener("click", saveEdit);
  $("cancel-edit").addEventListener("click", closeEditor);
  for (const b of document.querySelectorAll(".pick button")) b.addEventListener("click", () => label(b.dataset.preferred));

  async function load() {
    // The two halves load apart: pairs that cannot be drawn leave the texts to review.
    const [loaded, drawn] = await Promise.allSettled([api("/api/texts"), api("/api/pairs")]);
    if (loaded.status === "rejected") {
      say("Could not load the run: " + loaded.reason.message);
      return;
    }
    state.texts = loaded.value.texts || [];
    state.pairs = drawn.status === "fulfilled" ? drawn.value.pairs || [] : [];
    state.pairsError = drawn.status === "rejected" ? drawn.reason.message : "";
    fillSelect($("f-condition"), state.texts.map(conditionOf));
    fillSelect($("f-kind"), state.texts.map((t) => String(t.kind)));
    fillSelect($("f-verdict"), state.texts.flatMap((t) => Array.from(new Set((t.verdicts || []).map((v) => String(v.verdict))))));
    renderTexts();
    showText();
    renderPairs();
    tab(location.hash === "#labels" ? "labels" : "texts");
    document.body.dataset.ready = "1";
  }
  load();
})();
