// Threadgate web chat: signs in, streams the thread's item log (Server-Sent Events over fetch, so the
// access token travels in a header), renders prompts with native controls, and posts replies.
"use strict";

const room = document.body.dataset.room;
const needsToken = document.body.dataset.signIn === "token";
const idp = document.body.dataset.idp === "yes"; // people may sign in at the organisation's identity provider
const base = `/chat/${encodeURIComponent(room)}`;
const saved = "threadgate.chat"; // one sign-in per browser, for every room
const prompts = new Map(); // prompt_id -> the prompt's list element
const answeredHere = new Map(); // prompt_id -> this page's identity, for the prompts its replies answered
const grantedHere = new Map(); // prompt_id -> the pattern this page's "Approve for this session" granted
let me = null; // {name, token, identity, session}: session when signed in at the identity provider
let waitingForCard = false; // answered with a card's controls: the next card takes the focus
let posting = 0; // this page's messages on their way
const afterPosts = [];
let cursor = null;
let following = false;

function headers(extra = {}) {
  const all = { ...extra };
  if (me && me.token) all.Authorization = `Bearer ${me.token}`;
  return all;
}

function notify(text) {
  const notice = $("notice");
  notice.textContent = text || "";
  notice.hidden = !text;
}

// Sign-in ------------------------------------------------------------------------------------------

async function signIn(name, token) {
  const response = await fetch(`${base}/session`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(name ? { name } : {}),
  });
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ? body.error.message : `HTTP ${response.status}`);
  me = { name: body.name, token: token || null, identity: body.identity, session: Boolean(body.signed_in) };
  // A session is the browser's own (its cookie); a name or token is kept to sign in again next time.
  if (!me.session) localStorage.setItem(saved, JSON.stringify({ name: me.name, token: me.token }));
  if (body.room && body.room !== room) {
    // This room sends each visitor on to a room of their own (the demo's): go there, signed in.
    setStatus(`opening #${body.room}…`);
    location.replace(`/chat/${encodeURIComponent(body.room)}`);
    return;
  }
  $("sign-in").hidden = true;
  $("composer").hidden = false;
  $("who").hidden = false;
  $("who").textContent = me.session ? `Signed in as ${body.name}` : `signed in as ${body.identity}`;
  $("sign-out").hidden = false;
  $("text").focus();
  if (!following) follow();
}

explainPattern($("name"), "Use letters, digits, dots, dashes or underscores only (no spaces), like alice or bob.smith.");

function showSignIn(message) {
  me = null;
  $("sign-in").hidden = false;
  $("composer").hidden = true;
  $("who").hidden = true;
  $("sign-out").hidden = true;
  $("idp").hidden = !idp;
  $("token-label").hidden = !needsToken;
  $("token").required = needsToken;
  $("name").required = !needsToken;
  $("sign-in-error").hidden = !message;
  $("sign-in-error").textContent = message || "";
  $("name").focus();
}

$("sign-in").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await signIn($("name").value.trim() || null, $("token").value.trim() || null);
  } catch (error) {
    showSignIn(error.message);
  }
});

$("sign-out").addEventListener("click", async () => {
  localStorage.removeItem(saved);
  if (me && me.session) {
    // Ends the session for every page of this gateway (the inbox's too), and clears its cookie.
    await fetch("/auth/logout", { method: "POST", headers: { "Content-Type": "application/json" } }).catch(() => {});
  }
  showSignIn("");
});

// The live log -------------------------------------------------------------------------------------

// Keeps following while signed in: after a dropped connection, a restart, or a room not open to this
// reader yet (it opens once they take part: someone starts a run with them, or makes them an approver),
// waiting longer after each refusal in a row.
async function follow() {
  following = true;
  let refusals = 0;
  while (me) {
    let wait = 1000;
    try {
      // The name (or the session) says who reads: a room with runs shows itself to those who take part
      // in it only.
      const who = me.session ? "" : `?name=${encodeURIComponent(me.name)}`;
      const response = await fetch(`${base}/events${who}`, {
        headers: headers(cursor ? { "Last-Event-ID": cursor } : {}),
      });
      if (response.status === 401) {
        showSignIn(me.session ? "Your session has ended; sign in again." : "Your access token is no longer accepted; sign in again.");
        break;
      }
      if (response.status === 404) {
        refusals += 1;
        wait = Math.min(30_000, 1000 * 2 ** (refusals - 1));
        setStatus("not open to you");
        notify(`${(await response.json()).error.message} This page keeps checking and shows the room as soon as it is open to you.`);
      } else {
        if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
        if (refusals) notify("");
        refusals = 0;
        setStatus("live", true);
        await readEvents(response.body, (_id, item) => {
          if (!item) return;
          cursor = item.id;
          render(item);
        });
        setStatus("reconnecting…");
      }
    } catch (error) {
      // dropped connection or gateway restart: resume after the last item seen
      setStatus("reconnecting…");
    }
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  following = false;
}

function textOf(item) {
  if (item.content && item.content.length) return item.content.map((part) => part.text).join("\n");
  return item.text || "";
}

function render(item) {
  const log = $("log");
  let node = null;
  if (item.type === "pending_prompt") node = promptCard(item);
  else if (item.type === "pending_prompt_resolved") node = settleCard(item);
  else if (item.metadata && item.metadata.type === "votes") node = votesItem(item);
  else if (!isControlPress(item)) node = messageBubble(item);
  if (!node) return;
  node.dataset.itemId = item.id;
  log.append(node);
  arrived();
  if (node.classList.contains("prompt")) takeFocusIfWaiting(node);
}

// A press of a card's control (or a form's Submit) is logged as a message with structured answers; the
// card itself shows how it settled, so it is not shown a second time as a bubble, and a press the
// gateway did not take never reads as an answer.
function isControlPress(item) {
  return item.role === "person" && Boolean(item.metadata && (item.metadata.answers || item.metadata.decline));
}

// A reminder or an escalation's note is said by the gateway, under a word of its own: its emoji (🔔, ⏫)
// shows as an empty box where no emoji font is installed.
const NOTICE_WORDS = { reminder: "Reminder", escalation: "Escalation", claimed: "Claimed" };

function messageBubble(item) {
  const person = item.role === "person";
  const notice = !person && item.metadata && NOTICE_WORDS[item.metadata.type];
  const sender = person ? (item.sender || "").replace(/^web:/, "") : notice || "agent";
  const mine = person && me && item.sender === me.identity;
  if (!mine) announce(`${sender}: ${shortened(textOf(item))}`);
  return el(
    "li",
    { class: `item ${person ? "person" : "agent"}${mine ? " mine" : ""}${notice ? " gateway-notice" : ""}` },
    el("div", { class: "from" }, mine && sender.toLowerCase() !== "you" ? `${sender} (you)` : sender),
    el("div", { class: "bubble" }, textOf(item)),
  );
}

// An approval's votes so far ("Approved 1 of 2: web:alice"), said on its card rather than as a message;
// a line of its own when the card is not on the page.
function votesItem(item) {
  const card = prompts.get(item.metadata.prompt_id);
  if (!card) return el("li", { class: "item audit" }, textOf(item));
  if (!card.classList.contains("settled")) {
    showVotes(card, textOf(item));
    afterOwnPosts(() => announce(textOf(item)));
  }
  return null;
}

function shortened(text, limit = 140) {
  return text.length > limit ? `${text.slice(0, limit)}…` : text;
}

// An audit item settles its card, which then says who answered and what; a line stands in for a card
// that is not on the page (asked before the log's oldest item).
function settleCard(item) {
  const meta = (item.metadata && item.metadata.prompt) || {};
  const card = prompts.get(meta.prompt_id);
  if (!card) {
    return el("li", { class: `item audit ${outcomeOf(meta)}` }, settledText(withAnswerer(meta)));
  }
  const settled = { ...meta, tool_call: card.toolCall };
  card.dataset.settled = JSON.stringify(settled);
  const focusWasHere = card.contains(document.activeElement);
  card.classList.add("settled");
  if (meta.prompt_state) card.classList.add(meta.prompt_state);
  showGiven(card, meta);
  for (const control of card.querySelectorAll("input, textarea, select, button")) control.disabled = true;
  for (const hidden of card.querySelectorAll(".error, .problem, .typing, .panel")) hidden.hidden = true;
  if (meta.approvals > 1) showVotes(card, votesText(meta.approvals, meta.votes));
  showAllowed(card, settled);
  showOutcome(card, withAnswerer(settled));
  afterOwnPosts(() => announce(settledText(withAnswerer(settled))));
  if (focusWasHere) moveOn();
  if (pinned) toBottom(); // a card that settled is no new item: no "New items" button for it
  return null;
}

// A settled card's inputs show the answer given (after a reload, or when someone else answered), not
// blanks.
function showGiven(card, meta) {
  const form = card.querySelector("form.answer");
  if (!form || meta.prompt_state !== "answered") return;
  if (card.dataset.kind === "form" && meta.content) showFormContent(form, card.schema, meta.content);
  else if (card.questions) showAnswers(form, card.questions, meta.answers || []);
}

// Who answered: the audit item says so when the gateway records it; else this page knows the prompts
// its own replies answered.
function withAnswerer(meta) {
  return { granted: grantedHere.get(meta.prompt_id), ...meta, answered_by: meta.answered_by || answeredHere.get(meta.prompt_id) || null };
}

// This page's reply answered `promptId`: say so on its card if that already settled.
function answeredFromHere(promptId) {
  if (!promptId || !me) return;
  answeredHere.set(promptId, me.identity);
  const card = prompts.get(promptId);
  if (card && card.dataset.settled) {
    showOutcome(card, withAnswerer(JSON.parse(card.dataset.settled)));
  }
}

function openCards() {
  return [...prompts.values()].filter((card) => !card.classList.contains("settled"));
}

// After answering with a card's controls, focus goes to the next open card, or to the message box
// until the agent's next card arrives (which then takes it, unless the person started typing).
function moveOn() {
  const control = openCards().map(firstControl).find(Boolean);
  if (control) return control.focus();
  waitingForCard = true;
  $("text").focus();
}

function takeFocusIfWaiting(card) {
  const idle = document.activeElement === document.body || (document.activeElement === $("text") && !$("text").value);
  const control = firstControl(card);
  if (waitingForCard && idle && control) control.focus();
  waitingForCard = false;
}

// Prompts with native controls ---------------------------------------------------------------------

const KIND_TITLES = {
  approval: "Approval needed",
  ask_user_question: "Question",
  text: "Question",
  form: "Form",
  url: "Step on a web page",
};

function promptCard(item) {
  const meta = (item.metadata && item.metadata.prompt) || {};
  const questions = meta.questions || [];
  const titleId = `${meta.prompt_id}-title`;
  const card = el("li", {
    class: "item prompt",
    "aria-labelledby": titleId,
    dataset: { promptId: meta.prompt_id || "", kind: meta.kind || "" },
  });
  card.append(el("h2", { class: "kind", id: titleId }, KIND_TITLES[meta.kind] || "Question"));
  const asked = loggedAt(item.id);
  if (asked) card.append(el("p", { class: "asked" }, "asked ", when(asked)));
  card.toolCall = meta.tool_call || null;
  card.schema = meta.requested_schema || null;
  card.questions = meta.kind === "approval" ? null : meta.questions || null;
  if (meta.tool_call) card.append(toolCallBlock(meta.tool_call));
  if (meta.kind === "form" && meta.requested_schema) {
    card.append(el("p", { class: "text" }, meta.message || ""), formPrompt(meta));
  } else if (meta.kind === "url" && meta.url) {
    card.append(el("p", { class: "text" }, meta.message || ""), stepLink(meta.url), urlPrompt(meta));
  } else if (questions.length) {
    if (meta.kind === "approval") card.append(el("p", { class: "text" }, questions[0].question));
    card.append(questionsPrompt(meta));
    if (meta.kind === "approval") {
      const actions = card.querySelector(".actions");
      card.append(...decisionControls(meta, actions, (decision, panel) => sendDecision(meta, decision, panel)));
      if (meta.approvals > 1) card.append(votesLine(meta.approvals));
    }
  } else {
    card.append(el("p", { class: "text" }, textOf(item))); // no controls to draw: the text says it all
  }
  const actions = card.querySelector(".actions");
  if (actions && questions.length) actions.append(claimButton()); // Claim: the card's question is yours alone
  const hint = typingHint(meta);
  if (hint) card.append(el("p", { class: "hint typing" }, hint));
  card.append(outcomeLine());
  prompts.set(meta.prompt_id, card);
  announce(`${KIND_TITLES[meta.kind] || "Question"}: ${shortened(promptSummary(meta, textOf(item)))}`);
  return card;
}

// "Claim", as if typed: the gateway claims the room's open prompt for you (only you answer it for a while).
function claimButton() {
  const button = el("button", { type: "button", class: "secondary claim" }, "Claim");
  button.addEventListener("click", () => send({ text: "claim" }));
  return button;
}

function promptSummary(meta, text) {
  if (meta.message) return meta.message;
  const questions = meta.questions || [];
  if (questions.length > 1) return `${questions.length} questions, starting with ${questions[0].question}`;
  return questions.length ? questions[0].question : text;
}

// How a typed reply answers this card, as the gateway's reply mapper reads it.
function typingHint(meta) {
  const questions = meta.questions || [];
  if (meta.typing_hint) return meta.typing_hint; // an approval's, in the gateway's words
  if (meta.kind === "url") return "Or type done once the page is finished, or decline.";
  if (meta.kind === "form" && meta.requested_schema) {
    const names = Object.keys(meta.requested_schema.properties || {});
    const required = names.filter((name) => (meta.requested_schema.required || []).includes(name));
    const optional = names.filter((name) => !required.includes(name));
    const which = required.length && optional.length
      ? `required: ${required.join(", ")}; optional: ${optional.join(", ")}`
      : names.join(", ");
    return `Or type one name: value line per field (${which}), or decline.`;
  }
  if (questions.length > 1) {
    return `Or type one line per question, in order (or numbered 1. … to ${questions.length}. …).`;
  }
  const question = questions[0];
  if (!question || !(question.options || []).length) return "Or just type your answer.";
  if (question.multiSelect) return "Or type the numbers of your choices, like 1 3.";
  return "Or type an option's number or label, or your own answer.";
}

function questionsPrompt(meta) {
  const questions = meta.questions || [];
  const form = el("form", { class: "answer" });
  if (meta.kind === "approval") {
    const actions = approveDenyActions("Approve", "Deny");
    // Approve, and the same call for the rest of the run (a grant): only on an approval about a call.
    if (meta.session_label) {
      const session = el("button", { type: "submit", name: "decision", value: "Approve", class: "secondary" }, meta.session_label);
      session.dataset.grant = "true";
      actions.children[0].after(session);
    }
    form.append(actions);
  } else {
    questions.forEach((question, index) => form.append(questionField(meta.prompt_id, question, index, "Your answer")));
    form.append(el("div", { class: "actions" }, el("button", { type: "submit" }, "Send answer")));
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitAnswers(meta, questions, form, event.submitter);
  });
  return form;
}

async function submitAnswers(meta, questions, form, submitter) {
  let answers;
  try {
    answers =
      meta.kind === "approval"
        ? [{ question_id: questionId(questions[0], 0), answer: [submitter.value] }]
        : collectAnswers(questions, form);
  } catch (error) {
    notify(error.message);
    return;
  }
  const grant = Boolean(submitter && submitter.dataset.grant);
  await send({ text: answerSummary(answers), answers, prompt_id: meta.prompt_id, ...(grant ? { grant } : {}) });
}

// Send a decision from an approval's Deny-with-reason or Edit-and-approve form; what the gateway did not
// take (who may answer, an argument the tool's schema refuses) is shown on that form.
async function sendDecision(meta, decision, panel) {
  clearRefusal(panel);
  const answers = [{ question_id: questionId(meta.questions[0], 0), answer: [decision.answer] }];
  const text = decision.arguments ? "Approve, with edited arguments" : `Deny: ${decision.note}`;
  let refused = null;
  const message = { text, answers, prompt_id: meta.prompt_id, note: decision.note, arguments: decision.arguments };
  const body = await send(message, (said) => (refused = said));
  if (refused) showRefusal(panel, refused, (body && body.errors) || []);
}

// The buttons a form or a URL step ends with, and the line the gateway's notice about it shows in.
function stepActions(submitLabel) {
  return [acceptDeclineActions(submitLabel), el("p", { class: "error", role: "alert", hidden: true })];
}

// A flat form: its fields with the schema's constraints; Submit sends one structured answer per
// property, which the gateway checks with the validator every path uses.
function formPrompt(meta) {
  const schema = meta.requested_schema;
  const form = el("form", { class: "answer form-prompt" }, ...formBlocks(meta.prompt_id, schema), ...stepActions("Submit"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (event.submitter && event.submitter.value === "decline") {
      await answerStep(form, { text: "decline", decline: true, prompt_id: meta.prompt_id });
      return;
    }
    const answers = formAnswers(form, schema);
    await answerStep(form, { text: formSummary(form, schema), answers, prompt_id: meta.prompt_id });
  });
  return form;
}

// What the person's message says when they submit a form: one `title: value` line per property given.
function formSummary(form, schema) {
  const content = formContent(form, schema);
  return formFields(schema)
    .filter((field) => field.name in content)
    .map((field) => {
      const labels = new Map(formChoices(field.prop).map((choice) => [choice.value, choice.label]));
      const value = content[field.name];
      const shown = Array.isArray(value)
        ? value.map((entry) => labels.get(entry) || entry).join(", ")
        : typeof value === "boolean"
          ? (value ? "yes" : "no")
          : labels.get(value) || String(value);
      return `${field.title}: ${shown}`;
    })
    .join("\n");
}

// A URL step: Done once the page at the link is finished, or Decline.
function urlPrompt(meta) {
  const form = el("form", { class: "answer" }, ...stepActions("Done"));
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (event.submitter && event.submitter.value === "decline") {
      await answerStep(form, { text: "decline", decline: true, prompt_id: meta.prompt_id });
      return;
    }
    await answerStep(form, { text: "done", answers: [{ question_id: "q1", answer: ["done"] }], prompt_id: meta.prompt_id });
  });
  return form;
}

// Send a form's or a URL step's answer; a value the gateway did not take is shown on the card, by its
// field where it names one (focus goes to the first such field), and the prompt stays open.
async function answerStep(form, message) {
  const alert = form.querySelector(".error");
  alert.hidden = true;
  if (form.querySelector(".field")) markProblems(form, []);
  const body = await send(message, (text) => {
    alert.textContent = inPlainWords(text);
    alert.hidden = false;
  });
  if (body && body.errors && form.querySelector(".field")) {
    const first = markProblems(form, body.errors);
    if (first) first.focus();
  }
}

// Sending ------------------------------------------------------------------------------------------

// Post a message; the gateway's notice about it goes to `onNotice` (the page's notice line by default).
// `answering` is the prompt the message answers if the gateway takes it as an answer.
async function send(message, onNotice = notify, answering = message.prompt_id) {
  notify("");
  const clientId = (crypto.randomUUID && crypto.randomUUID()) || `${Date.now()}-${Math.random()}`;
  posting += 1;
  try {
    const response = await fetch(`${base}/messages`, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify({ ...(me.session ? {} : { name: me.name }), client_id: clientId, ...message }),
    });
    const body = await response.json();
    if (response.status === 401) return showSignIn(body.error.message);
    if (!response.ok) return onNotice(inPlainWords(body.error ? body.error.message : `HTTP ${response.status}`));
    if (body.notice) onNotice(inPlainWords(body.notice));
    if (body.granted) grantedHere.set(answering, body.granted);
    if (body.outcome === "answered") answeredFromHere(answering);
    return body;
  } catch (error) {
    notify("The message was not sent: the gateway cannot be reached. Try again in a moment.");
  } finally {
    posting -= 1;
    if (!posting) for (const said of afterPosts.splice(0)) said();
  }
}

// Run `said` once this page's posts are answered: a card settled by one of them then knows its answerer.
function afterOwnPosts(said) {
  if (posting) afterPosts.push(said);
  else said();
}

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = $("text").value;
  if (!text.trim()) return;
  const open = openCards().at(-1); // the prompt a typed reply answers, as the gateway sees it
  pinned = true; // a reply is read where it lands, at the bottom
  const sent = await send({ text }, notify, open && open.dataset.promptId);
  if (sent) $("text").value = "";
});

$("text").addEventListener("input", () => {
  waitingForCard = false;
});

$("text").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});

// Start --------------------------------------------------------------------------------------------

(async () => {
  setStatus("not signed in");
  localStorage.removeItem(`threadgate.chat.${room}`); // where a sign-in was kept per room before
  if (idp) {
    try {
      await signIn(null, null); // the session cookie, when this browser signed in at the identity provider
      if (me && me.session) return;
    } catch (error) {
      // no session here: sign in at the provider, or by name or token as below
    }
  }
  const stored = JSON.parse(localStorage.getItem(saved) || "null");
  if (stored) {
    try {
      await signIn(stored.name, stored.token);
      return;
    } catch (error) {
      localStorage.removeItem(saved);
    }
  }
  showSignIn("");
})();
