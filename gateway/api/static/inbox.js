// Threadgate operator inbox: every pending prompt across agents and threads, newest first, answered
// through the API's operator endpoint (POST /v1/agents/{agent}/inputs/{id}), kept live by /v1/events;
// the History view of settled prompts is history.js.
"use strict";

const saved = "threadgate.inbox";
const cards = new Map(); // prompt_id -> card element
const settledIds = new Set(); // settled while the list was loading: never shown as pending
let session = null; // {token, as} with an operator token; {person} when signed in at the identity provider
const runs = new Set(); // run ids of the cards shown: their grants are listed
let generation = 0; // bumped on sign-out, so an old event stream stops

// The session cookie signs a signed-in person's calls; its writes are JSON whether or not they carry a body.
function authHeaders() {
  return session.token ? { Authorization: `Bearer ${session.token}` } : {};
}

async function api(method, path, body) {
  const json = body || (!session.token && method !== "GET");
  const response = await fetch(path, {
    method,
    headers: { ...authHeaders(), ...(json ? { "Content-Type": "application/json" } : {}) },
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
  runs.clear();
  showGrants([]);
  $("empty").hidden = true;
  $("count").textContent = "";
  setStatus("not signed in");
}

async function openInbox(token, as, person) {
  session = person ? { person } : { token, as };
  const mine = ++generation;
  if (!person) localStorage.setItem(saved, JSON.stringify(session));
  $("sign-in").hidden = true;
  $("who").hidden = $("sign-out").hidden = $("views").hidden = false;
  $("who").textContent = person ? `signed in as ${person.name || person.person}` : `answering as ${as}`;
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

$("sign-out").addEventListener("click", async () => {
  localStorage.removeItem(saved);
  if (session && session.person) {
    await fetch("/auth/logout", { method: "POST", headers: { "Content-Type": "application/json" } }).catch(() => {});
    showSignedOut();
    return;
  }
  showSignIn("");
});

// Signed out of the identity provider's session: a way back in, and no token form.
function showSignedOut() {
  showSignIn("");
  $("sign-in").hidden = true;
  setStatus("signed out");
  $("signed-out").hidden = false;
}

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
  refreshGrants();
}

async function follow(mine) {
  let cursor = null;
  while (mine === generation) {
    try {
      const response = await fetch("/v1/events", {
        headers: { ...authHeaders(), ...(cursor ? { "Last-Event-ID": cursor } : {}) },
      });
      if (response.status === 401 && session && session.person) return showSignedOut();
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
    refreshGrants();
    announce(`New ${(KIND_TITLES[prompt.kind] || "prompt").toLowerCase()} from ${prompt.agent} in ${prompt.thread_id}. ${$("count").textContent}.`);
  } else if (entry.type === "input.claimed") {
    const card = cards.get(prompt.prompt_id);
    if (card && !card.classList.contains("settled")) showClaim(card, prompt);
  } else if (entry.type === "input.resolved") {
    settledIds.add(prompt.prompt_id);
    if (prompt.kind === "approval" && runs.has(prompt.run_id)) refreshGrants(); // a typed "always" grants
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
  // What was asked stays on the card (its controls go), and when it would have expired does not.
  const asked = card.querySelector("form:not(.panel)");
  if (asked) asked.before(...askedBlocks(JSON.parse(card.dataset.asked)));
  for (const expiry of card.querySelectorAll(".meta .expires")) expiry.remove();
  for (const form of card.querySelectorAll("form")) form.remove();
  for (const line of card.querySelectorAll(".claim")) line.remove();
  if (prompt.approvals > 1) showVotes(card, votesText(prompt.approvals, prompt.votes));
  showAllowed(card, prompt);
  showOutcome(card, prompt);
  if (focusWasHere) moveOn(card);
}

// A settled card's question (or message) and its link, as text.
function askedBlocks(asked) {
  const blocks = [el("p", { class: "asked" }, asked.text)];
  if (asked.url) blocks.push(stepLink(asked.url));
  return blocks;
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

// Grants' uses and expiries move on while the page is open (ages move on in common.js).
setInterval(() => {
  if (session) refreshGrants();
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
      el("span", { class: "expires" }, "expires ", when(prompt.expires_at)),
    ),
  );
  card.dataset.asked = JSON.stringify({ text: askedText(prompt), url: prompt.kind === "url" ? prompt.url : null });
  if (prompt.tool_call) card.append(toolCallBlock(prompt.tool_call));
  const form = el("form", {});
  runs.add(prompt.run_id);
  let panels = [];
  if (prompt.kind === "approval") {
    const actions = approveDenyActions("Approve", "Deny");
    form.append(el("p", {}, prompt.questions[0].question), actions);
    // No session box where several approvers decide: the gateway refuses a grant there (GRANT_NOT_ALLOWED).
    if (prompt.tool_call && !(prompt.approvals > 1)) form.append(forSession(prompt));
    panels = decisionControls(prompt, actions, (decision, panel) => decide(prompt, panel, decision));
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
  card.append(form, ...panels, claimLine(prompt)); // after the answer's controls: they keep the first focus
  if (prompt.approvals > 1) card.append(votesLine(prompt.approvals, prompt.votes));
  card.append(outcomeLine());
  cards.set(prompt.prompt_id, card);
  showClaim(card, prompt);
  if (where === "start") $("prompts").prepend(card);
  else $("prompts").append(card);
}

// Claims (POST/DELETE /v1/prompts/{id}/claim): who holds each prompt, and "Mine" shows only yours -------

let onlyMine = false;

// Who the inbox claims as: a signed-in person's person:<id>, else the identity the token answers as.
function claimant() {
  if (!session) return null;
  return session.person ? `person:${session.person.person}` : session.as;
}

function isMine(holder) {
  if (!holder || !session) return false;
  const identities = (session.person && session.person.identities) || [];
  return holder === claimant() || identities.includes(holder);
}

function claimLine(prompt) {
  const button = el("button", { class: "secondary", type: "button" }, "Claim");
  button.addEventListener("click", () => claim(prompt, button));
  return el("p", { class: "claim" }, el("span", { class: "holder" }), button, el("span", { class: "claim-error", role: "alert", hidden: true }));
}

function showClaim(card, prompt) {
  const line = card.querySelector(".claim");
  if (!line) return;
  const held = prompt.claimed_by && prompt.claimed_until && new Date(prompt.claimed_until) > new Date();
  const holder = held ? prompt.claimed_by : "";
  card.dataset.claimedBy = holder;
  const mine = isMine(holder);
  const until = held ? new Date(prompt.claimed_until).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" }) : "";
  line.querySelector(".holder").textContent = held ? `${mine ? "You are" : `${holder} is`} on it until ${until}` : "Nobody has claimed it";
  line.querySelector("button").textContent = mine ? "Release" : "Claim";
  line.querySelector("button").hidden = held && !mine;
  card.classList.toggle("claimed-by-other", Boolean(held && !mine));
  filterMine();
}

async function claim(prompt, button) {
  const card = cards.get(prompt.prompt_id);
  const error = card.querySelector(".claim .claim-error");
  const release = card.dataset.claimedBy && isMine(card.dataset.claimedBy);
  error.hidden = true;
  button.disabled = true;
  try {
    const body = session.token ? { from: session.as } : undefined;
    const now = await api(release ? "DELETE" : "POST", `/v1/prompts/${prompt.prompt_id}/claim`, body);
    showClaim(card, now);
    announce(release ? "Released." : "Claimed: only you can answer it until the claim ends.");
  } catch (problem) {
    if (problem.details && problem.details.claimed_by) showClaim(card, { ...prompt, ...problem.details });
    error.textContent = problem.message;
    error.hidden = false;
  } finally {
    button.disabled = false;
  }
}

function filterMine() {
  for (const card of cards.values()) card.hidden = onlyMine && !isMine(card.dataset.claimedBy);
}

$("only-mine").addEventListener("click", () => {
  onlyMine = !onlyMine;
  $("only-mine").setAttribute("aria-pressed", String(onlyMine));
  filterMine();
});

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
  if (prompt.kind === "approval") {
    // "Approve for this session" approves with a grant of the pattern the card shows.
    const grant = decision === "session" ? { scope: "run", match: chosenPattern(form) } : null;
    return decide(prompt, form, { answer: decision === "Deny" ? "Deny" : "Approve", grant });
  }
  if (prompt.kind === "form") markProblems(form, []);
  let body;
  try {
    if (decision === "decline") body = { action: "decline", from: session.as };
    else body = { action: "accept", content: content(prompt, form), from: session.as };
  } catch (problem) {
    error.textContent = problem.message;
    error.hidden = false;
    return;
  }
  await submit(prompt, form, body);
}

// An approval's decision ({answer: "Approve"|"Deny", note?, arguments?, grant?}), sent from `form` (the
// card's buttons, or its Deny-with-reason or Edit-and-approve form).
async function decide(prompt, form, decision) {
  if (form.classList.contains("panel")) clearRefusal(form);
  const body = { action: "accept", answers: [decision.answer], from: session.as };
  if (decision.note) body.note = decision.note;
  if (decision.arguments) body.arguments = decision.arguments;
  if (decision.grant) body.grant = decision.grant;
  await submit(prompt, form, body);
}

// Send `body` for the card's prompt, its buttons disabled meanwhile. The card settles; or (an approval
// that needs more approvers) shows the votes so far; or shows why the gateway did not take it on
// `form`, by the field or argument it names, the focus there.
async function submit(prompt, form, body) {
  const card = cards.get(prompt.prompt_id);
  const buttons = card.querySelectorAll("button");
  card.dataset.answering = card.contains(document.activeElement) ? "focus" : "";
  for (const button of buttons) button.disabled = true;
  try {
    const answered = await api("POST", `/v1/agents/${encodeURIComponent(prompt.agent)}/inputs/${prompt.prompt_id}`, body);
    if (answered.prompt_state === "pending") {
      for (const button of buttons) button.disabled = false;
      card.dataset.answering = "";
      showVotes(card, votesText(answered.approvals, answered.votes));
      announce(votesText(answered.approvals, answered.votes));
      const next = firstControl(form);
      if (next) next.focus();
      return;
    }
    settledIds.add(prompt.prompt_id);
    if (!card.classList.contains("settled")) settle(card, answered);
    if (answered.grant) {
      showOutcome(card, { ...answered, granted: answered.grant.match });
      refreshGrants();
    }
    updateCount();
  } catch (problem) {
    card.dataset.answering = "";
    for (const button of buttons) button.disabled = false;
    const details = problem.details || {};
    if (details.votes && details.approvals > 1) showVotes(card, votesText(details.approvals, details.votes));
    if (form.classList.contains("panel")) return showRefusal(form, problem.message, details.errors || []);
    const error = form.querySelector(".error");
    error.textContent = inPlainWords(problem.message);
    error.hidden = false;
    const first = prompt.kind === "form" && details.errors ? markProblems(form, details.errors) : null;
    (first || firstControl(form)).focus();
  }
}

// Approve for this session: grants ---------------------------------------------------------------------
// The pattern a grant lets through (the rule is the gateway's: docs/api.md, "Grants"). Exact by default:
// a string ending in " *" would widen, so its star is written \* (backslash, star). A command can be
// widened to its first word ("git *"), that word with any arguments but never a second command; the
// gateway refuses a pattern it cannot grant (a shell, a command that runs others), and the card says why.

// Control characters (C0, DEL, C1) and the line and paragraph separators: a widened command never
// reaches past one (the gateway's rule, gateway/rules/grants.py).
const METACHARACTERS = /[;&|$`<>()\\\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
// A command tool's arguments that are not part of the call (gateway/rules/call_identity.py): a grant never
// names them, so the pattern shown is the one kept.
const DESCRIPTIVE = {
  Bash: ["description", "timeout", "run_in_background"],
  shell: ["justification", "timeout_ms", "prefix_rule"],
  shell_command: ["justification", "timeout_ms", "prefix_rule"],
  exec_command: ["justification", "yield_time_ms", "max_output_tokens", "prefix_rule"],
  local_shell: ["timeout_ms"],
};

function exactPattern(call) {
  const exact = (value) =>
    typeof value === "string" && /[ \\]\*$/.test(value) ? `${value.slice(0, -1)}\\*` : value;
  const left = DESCRIPTIVE[call.name] || [];
  const args = Object.fromEntries(Object.entries(call.arguments || {})
    .filter(([key]) => !left.includes(key))
    .map(([key, value]) => [key, exact(value)]));
  return { name: call.name, arguments: args };
}

// The first word a string `command` argument may be widened to, or null.
function firstWord(call) {
  const command = (call.arguments || {}).command;
  if (typeof command !== "string" || METACHARACTERS.test(command)) return null;
  return command.split(" ", 1)[0] || null;
}

function describePattern(match) {
  const args = match.arguments || {};
  return Object.keys(args).length ? `${match.name} ${JSON.stringify(args)}` : `${match.name} with no arguments`;
}

function forSession(prompt) {
  const word = firstWord(prompt.tool_call);
  const shown = el("code", { class: "pattern" }, describePattern(exactPattern(prompt.tool_call)));
  const box = el("fieldset", { class: "for-session", dataset: { word: word || "" } },
    el("legend", {}, "For the rest of this run"),
    el("p", { class: "hint" }, "Approve this call and let later calls of the run that match the pattern run without asking."),
  );
  if (word) {
    const widen = el("input", { type: "checkbox", name: "widen" });
    widen.addEventListener("change", () => (shown.textContent = describePattern(chosenPattern(box.form))));
    box.append(el("label", { class: "choice" }, widen,
      el("span", {}, "Any ", el("code", {}, word), " command (", el("code", {}, `${word} *`),
        "): that word with any arguments, never a second command")));
  }
  box.append(
    el("p", {}, "Pattern: ", shown),
    el("div", { class: "actions" },
      el("button", { type: "submit", name: "decision", value: "session", class: "secondary" }, "Approve for this session")),
  );
  box.dataset.call = JSON.stringify(prompt.tool_call);
  return box;
}

function chosenPattern(form) {
  const box = form.querySelector(".for-session");
  const call = JSON.parse(box.dataset.call);
  const match = exactPattern(call);
  const widen = box.querySelector("input[name=widen]");
  if (widen && widen.checked) match.arguments.command = `${box.dataset.word} *`;
  return match;
}

let grantsAsked = 0; // only the latest listing is shown

async function refreshGrants() {
  if (!session || !runs.size) return showGrants([]);
  const mine = ++grantsAsked;
  const found = [];
  for (const run of runs) {
    try {
      found.push(...(await api("GET", `/v1/runs/${encodeURIComponent(run)}/grants`)).items);
    } catch (problem) {
      if (problem.status === 404) runs.delete(run); // not this token's, or gone
    }
  }
  if (mine === grantsAsked) showGrants(found);
}

function showGrants(grants) {
  $("grants").hidden = !grants.length;
  $("grant-list").replaceChildren(...grants.map((grant) => {
    const revoke = el("button", { type: "button", class: "deny" }, "Revoke");
    revoke.setAttribute("aria-label", `Revoke ${describePattern(grant.match)}`);
    revoke.addEventListener("click", () => revokeGrant(grant, revoke));
    return el("li", { dataset: { grantId: grant.grant_id } },
      el("code", { class: "pattern" }, describePattern(grant.match)),
      el("span", { class: "meta" }, `run ${grant.run_id} · by ${grant.created_by} · `, when(grant.created_at),
        ` · used ${grant.uses} ${grant.uses === 1 ? "time" : "times"}`),
      revoke);
  }));
}

async function revokeGrant(grant, button) {
  const error = $("grants-error");
  error.hidden = true;
  button.disabled = true;
  try {
    const query = new URLSearchParams(session.as ? { from: session.as } : {});
    await api("DELETE", `/v1/runs/${encodeURIComponent(grant.run_id)}/grants/${encodeURIComponent(grant.grant_id)}?${query}`);
    announce(`Revoked: ${describePattern(grant.match)} is asked about again.`);
  } catch (problem) {
    if (problem.status !== 404) {
      button.disabled = false;
      error.textContent = problem.message;
      error.hidden = false;
      return;
    }
  }
  await refreshGrants();
  const next = $("grant-list").querySelector("button") || firstControl($("prompts"));
  if (next) next.focus();
}

// Start: a link may carry the session in its fragment (#token=…&as=…), which never reaches a server.

(async () => {
  const me = await fetch("/v1/me").catch(() => null);
  if (me && me.ok) return openInbox(null, null, await me.json());
  const fragment = new URLSearchParams(location.hash.slice(1));
  if (fragment.get("token")) {
    history.replaceState(null, "", location.pathname);
    $("as").value = fragment.get("as") || "";
    if (fragment.get("as")) return openInbox(fragment.get("token"), fragment.get("as"));
    $("token").value = fragment.get("token");
  }
  const stored = JSON.parse(localStorage.getItem(saved) || "null");
  if (stored) return openInbox(stored.token, stored.as);
  showSignIn("");
})();
