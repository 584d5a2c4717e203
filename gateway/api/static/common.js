// Threadgate pages' shared pieces: building elements, reading an event stream, and a prompt's
// tool call, question fields and answers, the same on the chat page and in the operator inbox.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (key === "class") node.className = value;
    else if (key === "dataset") Object.assign(node.dataset, value);
    else if (key in node) node[key] = value;
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child != null) node.append(child);
  return node;
}

function setStatus(text, live = false) {
  $("status").textContent = text;
  $("status").classList.toggle("live", live);
}

// Server-Sent Events read over fetch (so a token can travel in a header): onEvent(id, data) for each
// event, `data` parsed from JSON or null, until the stream ends or wanted() turns false.
async function readEvents(body, onEvent, wanted = () => true) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done || !wanted()) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let id = null;
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("id:")) id = line.slice(3).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).trim());
      }
      onEvent(id, data.length ? JSON.parse(data.join("\n")) : null);
    }
  }
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

// Ages move on while the page is open.
setInterval(() => {
  for (const time of document.querySelectorAll("time[datetime]")) time.textContent = relativeTime(time.dateTime);
}, 30_000);

// When a thread item was logged: the milliseconds its stream id starts with ("1733350000000-0"), as ISO.
function loggedAt(itemId) {
  const match = /^(\d{12,})-\d+$/.exec(itemId || "");
  return match ? new Date(Number(match[1])).toISOString() : null;
}

// Prompts ------------------------------------------------------------------------------------------

function questionId(question, index) {
  return question.id || `q${index + 1}`;
}

function toolCallBlock(toolCall, label = "Tool call") {
  return el(
    "pre",
    { class: "tool", role: "group", "aria-label": label }, // a label needs a role to be read
    el("span", { class: "name" }, toolCall.name),
    `(${JSON.stringify(toolCall.arguments || {}, null, 2)})`,
  );
}

// Approve and Deny, each submitting its own "decision" value.
function approveDenyActions(approveValue, denyValue) {
  return el(
    "div",
    { class: "actions" },
    el("button", { type: "submit", name: "decision", value: approveValue }, "Approve"),
    el("button", { type: "submit", name: "decision", value: denyValue, class: "deny" }, "Deny"),
  );
}

// What a form or a URL step ends with: accept under its own label, or Decline (the form's checks skipped).
function acceptDeclineActions(acceptLabel) {
  return el(
    "div",
    { class: "actions" },
    el("button", { type: "submit", name: "decision", value: "accept" }, acceptLabel),
    el("button", { type: "submit", name: "decision", value: "decline", class: "secondary", formNoValidate: true }, "Decline"),
  );
}

// One question as a fieldset: a text box when it has no options, else radios (or checkboxes when
// multiSelect) numbered as in the chat, and an "Other" box.
function questionField(promptId, question, index, placeholder) {
  const id = questionId(question, index);
  const name = `${promptId}-${id}`;
  const legend = el("legend", {}, question.question, question.header ? el("span", { class: "header" }, question.header) : null);
  const field = el("fieldset", { dataset: { questionId: id } }, legend);
  const options = question.options || [];
  if (!options.length) {
    field.append(el("textarea", { name, rows: 2, "aria-label": question.question, placeholder }));
    return field;
  }
  const type = question.multiSelect ? "checkbox" : "radio";
  options.forEach((option, number) => {
    field.append(
      el(
        "label",
        { class: "choice" },
        el("input", { type, name, value: option.label }),
        el("span", {}, `${number + 1}. ${option.label}`),
        option.description ? el("span", { class: "desc" }, option.description) : null,
      ),
    );
  });
  field.append(
    el(
      "label",
      { class: "choice" },
      "Other:",
      el("input", { type: "text", class: "other", name: `${name}-other`, "aria-label": `Other answer to: ${question.question}` }),
    ),
  );
  return field;
}

// The structured answers the question fields in `form` hold; throws an Error that says what is missing.
function collectAnswers(questions, form) {
  return questions.map((question, index) => {
    const id = questionId(question, index);
    const field = form.querySelector(`fieldset[data-question-id="${CSS.escape(id)}"]`);
    if (!(question.options || []).length) {
      const text = field.querySelector("textarea").value.trim();
      if (!text) throw new Error(`Answer “${question.question}” first.`);
      return { question_id: id, answer: [text] };
    }
    const answer = [...field.querySelectorAll("input:checked")].map((input) => input.value);
    const other = field.querySelector("input.other").value.trim();
    if (other) answer.push(other);
    if (!question.multiSelect && answer.length !== 1) {
      throw new Error(`Pick one answer to “${question.question}” (an option, or Other).`);
    }
    return { question_id: id, answer };
  });
}

// Put answers back into the question fields in `form` (an answered card shows what was given): an
// option's label checks its box, other words go to its Other box; answers in the questions' order.
function showAnswers(form, questions, answers) {
  questions.forEach((question, index) => {
    const given = (answers[index] && answers[index].answer) || [];
    const field = form.querySelector(`fieldset[data-question-id="${CSS.escape(questionId(question, index))}"]`);
    if (!field) return;
    if (!(question.options || []).length) {
      field.querySelector("textarea").value = given.join(", ");
      return;
    }
    const labels = new Set((question.options || []).map((option) => option.label));
    for (const box of field.querySelectorAll("input[type=radio], input[type=checkbox]")) box.checked = given.includes(box.value);
    field.querySelector("input.other").value = given.filter((entry) => !labels.has(entry)).join(", ");
  });
}

function answerSummary(answers) {
  return answers.map((entry) => entry.answer.join(", ") || "(no selection)").join(" · ");
}

// JSON values equal whatever the order of their objects' keys (a call as asked and as allowed).
function sameJson(a, b) {
  const canonical = (value) =>
    value && typeof value === "object" && !Array.isArray(value)
      ? Object.fromEntries(Object.keys(value).sort().map((key) => [key, canonical(value[key])]))
      : Array.isArray(value) ? value.map(canonical) : value;
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

// Whether a settled approval allowed another call than the one asked (the person edited it).
function wasEdited(prompt) {
  return Boolean(prompt.approved_call && prompt.tool_call && !sameJson(prompt.approved_call, prompt.tool_call));
}

// How a settled prompt reads on its card, the same on both pages: who answered and what, in words.
// `prompt` holds kind, prompt_state, answered_by, answers ([{question, answer}]) and reason; an
// approval also its note and, approved, tool_call and approved_call.
function settledText(prompt) {
  const outcome = outcomeOf(prompt);
  if (outcome === "declined") return prompt.cancelled_by ? `✗ Declined by ${prompt.cancelled_by}` : "✗ Declined";
  if (outcome === "expired" || outcome === "cancelled") {
    const who = prompt.cancelled_by ? ` by ${prompt.cancelled_by}` : "";
    return `✗ ${outcome === "expired" ? "Expired" : "Cancelled"}${who}: ${prompt.reason || prompt.reason_code || "cancelled"}`;
  }
  const who = prompt.answered_by || "someone allowed to answer";
  const answers = prompt.answers || [];
  if (prompt.kind === "approval") {
    const approved = outcome === "approved";
    let said = approved ? `✓ Approved by ${who}${wasEdited(prompt) ? " with edits" : ""}` : `✗ Denied by ${who}`;
    if (approved && prompt.granted) said += `, and for this session: ${patternText(prompt.granted)}`;
    return prompt.note ? `${said}: ${prompt.note}` : said;
  }
  if (prompt.kind === "url") return `✓ Marked done by ${who}`;
  if (prompt.kind === "form") {
    const given = answers.filter((entry) => entry.answer.length).map((entry) => `${entry.question}: ${entry.answer.join(", ")}`);
    return `✓ Answered by ${who}: ${given.join(" · ") || "(nothing filled in)"}`;
  }
  return `✓ Answered by ${who}: ${answerSummary(answers)}`;
}

// How a settled prompt (a card's, an audit item's or a History record's) came out, one word: approved,
// denied, answered, declined, expired or cancelled. It names the outcome's colour everywhere; the text
// beside it says the same in words (✓ / ✗ and the outcome), so nothing depends on the colour.
function outcomeOf(prompt) {
  if (prompt.prompt_state === "answered") {
    if (prompt.kind !== "approval") return "answered";
    const answers = prompt.answers || [];
    return answers.length && answers[0].answer[0] === "Approve" ? "approved" : "denied";
  }
  if (prompt.reason_code === "declined") return "declined";
  if (prompt.reason_code === "expired" || prompt.outcome === "expired") return "expired";
  return "cancelled";
}

// A grant's pattern in short: a command's own words (`npm test`), else the tool and its arguments.
function patternText(match) {
  const args = match.arguments || {};
  const keys = Object.keys(args);
  if (keys.length === 1 && keys[0] === "command" && typeof args.command === "string") return `\`${args.command}\``;
  return `\`${keys.length ? `${match.name} ${JSON.stringify(args)}` : match.name}\``;
}

function outcomeLine() {
  return el("p", { class: "outcome", hidden: true });
}

// `prompt`: the settled prompt, whose outcome (outcomeOf) colours the line and whose settledText it says.
function showOutcome(card, prompt) {
  const outcome = card.querySelector(".outcome");
  outcome.textContent = settledText(prompt);
  outcome.className = `outcome ${outcomeOf(prompt)}`;
  outcome.hidden = false;
}

// The gateway's problems in people's words: its sentences name the schema's constraint in brackets
// ("must pick at most 2 (maxItems 2)"), which says nothing to someone filling in a form.
const PLAIN_WORDS = [
  [/must be an email address \(format email\)/g, "must be an email address like name@example.com"],
  [/must be a URI such as (\S+) \(format uri\)/g, "must be a web address like $1"],
  [/must be a date such as (\S+) \(format date\)/g, "must be a date like $1"],
  [/must be a date and time such as \S+ \(format date-time\)/g, "must be a date and a time"],
  [/ \((?:minimum|maximum|minLength|maxLength|format|minItems|maxItems) [^)]*\)/g, ""],
  [/must be a whole number \(integer\)/g, "must be a whole number"],
];

function inPlainWords(text) {
  return PLAIN_WORDS.reduce((said, [pattern, words]) => said.replace(pattern, words), text || "");
}

// Say something to screen readers without moving focus: a short sentence in the page's polite
// status region, in place of reading a whole card aloud.
function announce(text) {
  const region = $("announcer");
  region.textContent = "";
  // A fresh text node after clearing is announced even when the sentence repeats.
  setTimeout(() => (region.textContent = text), 50);
}

// The first control a person would use in `container` (an enabled input, select, textarea or button).
function firstControl(container) {
  return [...container.querySelectorAll("input, select, textarea, button")].find(
    (control) => !control.disabled && control.offsetParent !== null,
  );
}

// A name field's own message for a value its pattern refuses, in place of the browser's generic
// "Please match the requested format".
function explainPattern(input, message) {
  const check = () => input.setCustomValidity(input.validity.patternMismatch ? message : "");
  input.addEventListener("input", check);
  check();
}
