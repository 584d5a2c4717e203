// Threadgate operator inbox: every pending prompt across agents and threads, newest first, answered
// through the API's operator endpoint (POST /v1/agents/{agent}/inputs/{id}), kept live by /v1/events;
// the History view of settled prompts is history.js.
"use strict";

const saved = "threadgate.inbox";
const cards = new Map(); // prompt_id -> card element
const settledIds = new Set(); // settled while the list was loading: never shown as pending
let session = null; // {token, as}
let generation = 0; // bumped on sign-out, so an old event stream stops

async function api(method, path, body) {
  const response = await fetch(path, {
    method,
    headers: { Authorization: `Bearer ${session.token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = new Error(data.error ? data.error.message : `HTTP ${response.status}`);
    error.status = response.status;
    error.details = data.error && data.error.details;
    throw error;
  }
  return data;
}

function pendingCards() {
  return [...cards.values()].filter((card) => !card.classList.contains("settled"));
}

function updateCount() {
  $("count").textContent = `${pendingCards().length} pending`;
  $("empty").hidden = cards.size > 0;
}

// Sign-in ------------------------------------------------------------------------------------------

function showSignIn(message) {
  session = null;
  generation += 1;
  $("sign-in").hidden = false;
  $("who").hidden = $("sign-out").hidden = $("views").hidden = true;
  resetHistory();
  $("sign-in-error").hidden = !message;
  $("sign-in-error").textContent = message || "";
  $("prompts").replaceChildren();
  cards.clear();
  $("empty").hidden = true;
  $("count").textContent = "";
  setStatus("not signed in");
}

async function openInbox(token, as) {
  session = { token, as };
  const mine = ++generation;
  sessionStorage.setItem(saved, JSON.stringify(session));
  $("sign-in").hidden = true;
  $("who").hidden = $("sign-out").hidden = $("views").hidden = false;
  $("who").textContent = `answering as ${as}`;
  follow(mine);
  try {
    await loadPending();
  } catch (error) {
    if (error.status === 401 || error.status === 403) showSignIn(error.message);
    else setStatus(`could not load the inbox: ${error.message}`);
  }
}

explainPattern($("as"), "Write who you answer as: a platform, a colon and an id, like web:alice or slack:U0123ABC.");

$("sign-in").addEventListener("submit", (event) => {
  event.preventDefault();
  openInbox($("token").value.trim(), $("as").value.trim());
});

$("sign-out").addEventListener("click", () => {
  sessionStorage.removeItem(saved);
  showSignIn("");
});

// The list, and live updates -----------------------------------------------------------------------

async function loadPending() {
  let cursor = null;
  const found = [];
  for (let page = 0; page < 20; page += 1) {
    const query = new URLSearchParams({ state: "pending", limit: "100" });
    if (cursor) query.set("cursor", cursor);
    const data = await api("GET", `/v1/prompts?${query}`);
    found.push(...data.items);
    cursor = data.cursor;
    if (!cursor) break;
  }
  for (const prompt of found) if (!settledIds.has(prompt.prompt_id)) place(prompt, "end");
  updateCount();
}

async function follow(mine) {
  let cursor = null;
  while (mine === generation) {
    try {
      const response = await fetch("/v1/events", {
        headers: { Authorization: `Bearer ${session.token}`, ...(cursor ? { "Last-Event-ID": cursor } : {}) },
      });
      if (response.status === 401) return showSignIn("The token is not valid on this gateway.");
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      setStatus("live", true);
      await readEvents(
        response.body,
        (id, entry) => {
          if (id) cursor = id;
          if (entry) onEvent(entry);
        },
        () => mine === generation,
      );
    } catch (error) {
      // dropped connection: resume after the last event seen
    }
    if (mine !== generation) return;
    setStatus("reconnecting…");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// New and settled prompts are said politely (a screen reader hears them without losing its place).
function onEvent(entry) {
  if (entry.type === "input.resolved") historySettled();
  const prompt = entry.data || {};
  if (entry.type === "input.requested" && !cards.has(prompt.prompt_id) && !settledIds.has(prompt.prompt_id)) {
    place(prompt, "start");
    updateCount();
    announce(`New ${(KIND_TITLES[prompt.kind] || "prompt").toLowerCase()} from ${prompt.agent} in ${prompt.thread_id}. ${$("count").textContent}.`);
  } else if (entry.type === "input.resolved") {
    settledIds.add(prompt.prompt_id);
    const card = cards.get(prompt.prompt_id);
    if (card && !card.classList.contains("settled")) {
      settle(card, prompt);
      updateCount();
      announce(`${settledText(prompt)}. ${$("count").textContent}.`);
    }
  }
  updateCount();
}

function settle(card, prompt) {
  // Its buttons are disabled while an answer is sent, which drops the focus: the flag remembers it.
  const focusWasHere = card.contains(document.activeElement) || card.dataset.answering === "focus";
  card.classList.add("settled");
  card.dataset.state = prompt.prompt_state;
  card.querySelector("form").remove();
  showOutcome(card, prompt.prompt_state, settledText(prompt));
  if (focusWasHere) moveOn(card);
}

// Focus goes on to the next pending card's first control, or (none left) to how this card settled.
function moveOn(card) {
  const control = pendingCards().map(firstControl).find(Boolean);
  if (control) return control.focus();
  const outcome = card.querySelector(".outcome");
  outcome.tabIndex = -1;
  outcome.focus();
}

// Cards --------------------------------------------------------------------------------------------

const KIND_TITLES = { approval: "Approval", ask_user_question: "Question", text: "Free text", form: "Form", url: "URL step" };

function threadLink(threadId) {
  if (threadId.startsWith("web:")) return el("a", { href: `/chat/${threadId.slice(4)}` }, threadId);
  return el("span", {}, threadId);
}

// "3 min ago", "in 7 days": in the browser's language, the full date and time on hover.
const RELATIVE = new Intl.RelativeTimeFormat(undefined, { numeric: "auto", style: "short" });
const UNITS = [
  ["day", 86_400_000],
  ["hour", 3_600_000],
  ["minute", 60_000],
];

function relativeTime(iso, now = Date.now()) {
  const offset = new Date(iso).getTime() - now;
  if (Number.isNaN(offset)) return iso;
  for (const [unit, size] of UNITS) {
    if (Math.abs(offset) >= size) return RELATIVE.format(Math.round(offset / size), unit);
  }
  return RELATIVE.format(0, "minute");
}

function when(iso) {
  return el("time", { dateTime: iso, title: new Date(iso).toLocaleString() }, relativeTime(iso));
}

// Ages and expiries move on while the page is open.
setInterval(() => {
  for (const time of document.querySelectorAll("time[datetime]")) time.textContent = relativeTime(time.dateTime);
}, 30_000);

function place(prompt, where) {
  const titleId = `${prompt.prompt_id}-title`;
  const card = el("li", {
    class: "card",
    "aria-labelledby": titleId,
    dataset: { promptId: prompt.prompt_id, state: "pending" },
  });
  card.append(
    el(
      "p",
      { class: "meta" },
      el("span", { class: "kind", id: titleId }, KIND_TITLES[prompt.kind] || prompt.kind),
      el("span", {}, "agent ", el("b", {}, prompt.agent)),
      el("span", {}, "thread ", threadLink(prompt.thread_id)),
      el("span", {}, "asked ", when(prompt.created_at)),
      el("span", {}, "expires ", when(prompt.expires_at)),
    ),
  );
  if (prompt.tool_call) card.append(toolCallBlock(prompt.tool_call));
  const form = el("form", {});
  if (prompt.kind === "approval") {
    form.append(el("p", {}, prompt.questions[0].question));
    form.append(approveDenyActions("approve", "deny"));
  } else {
    if (prompt.kind === "form" && prompt.requested_schema) {
      form.append(el("p", { class: "message" }, prompt.message || ""), ...formBlocks(prompt.prompt_id, prompt.requested_schema));
    } else if (prompt.kind === "url" && prompt.url) {
      form.append(el("p", { class: "message" }, prompt.message || ""), stepLink(prompt.url));
    } else {
      prompt.questions.forEach((question, index) => form.append(questionField(prompt.prompt_id, question, index, "Answer")));
    }
    const accept = { form: "Submit", url: "Done" }[prompt.kind] || "Send answer";
    form.append(acceptDeclineActions(accept));
  }
  form.append(el("p", { class: "error", role: "alert", hidden: true }));
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    answer(prompt, form, event.submitter.value);
  });
  card.append(form, outcomeLine());
  cards.set(prompt.prompt_id, card);
  if (where === "start") $("prompts").prepend(card);
  else $("prompts").append(card);
}

function content(prompt, form) {
  if (prompt.kind === "form") return formContent(form, prompt.requested_schema);
  if (prompt.kind === "url") return "done";
  if (prompt.kind === "text") {
    const text = form.querySelector("textarea").value;
    if (!text.trim()) throw new Error("Write an answer first.");
    return text;
  }
  return collectAnswers(prompt.questions, form);
}

async function answer(prompt, form, decision) {
  const error = form.querySelector(".error");
  error.hidden = true;
  if (prompt.kind === "form") markProblems(form, []);
  let body;
  try {
    if (prompt.kind === "approval") body = { action: "accept", content: decision === "approve", from: session.as };
    else if (decision === "decline") body = { action: "decline", from: session.as };
    else body = { action: "accept", content: content(prompt, form), from: session.as };
  } catch (problem) {
    error.textContent = problem.message;
    error.hidden = false;
    return;
  }
  const card = cards.get(prompt.prompt_id);
  card.dataset.answering = form.contains(document.activeElement) ? "focus" : "";
  for (const button of form.querySelectorAll("button")) button.disabled = true;
  try {
    const settled = await api("POST", `/v1/agents/${encodeURIComponent(prompt.agent)}/inputs/${prompt.prompt_id}`, body);
    settledIds.add(prompt.prompt_id);
    if (!card.classList.contains("settled")) settle(card, settled);
    updateCount();
  } catch (problem) {
    card.dataset.answering = "";
    for (const button of form.querySelectorAll("button")) button.disabled = false;
    error.textContent = inPlainWords(problem.message);
    error.hidden = false;
    const first = prompt.kind === "form" && problem.details ? markProblems(form, problem.details.errors) : null;
    (first || firstControl(form)).focus();
  }
}

// Start: a link may carry the session in its fragment (#token=…&as=…), which never reaches a server.

(() => {
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("token")) {
    history.replaceState(null, "", location.pathname);
    $("as").value = fragment.get("as") || "";
    if (fragment.get("as")) return openInbox(fragment.get("token"), fragment.get("as"));
    $("token").value = fragment.get("token");
  }
  const stored = JSON.parse(sessionStorage.getItem(saved) || "null");
  if (stored) return openInbox(stored.token, stored.as);
  showSignIn("");
})();
