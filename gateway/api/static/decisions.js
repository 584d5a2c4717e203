// Threadgate pages' approval decisions, the same on the chat page and in the operator inbox: Deny with
// a reason, Edit and approve (a form of the call's arguments), the votes of an approval that needs
// several approvers, and what a settled approval allowed. The gateway decides; these controls collect
// the person's words and arguments and show what it says back.
"use strict";

const MAX_NOTE_CHARS = 2000;
// An edited argument the browser cannot read, said as the gateway says it (notices.NOT_A_NUMBER, not_json).
const NOT_A_NUMBER = "Enter a number.";
const notJson = (why) => `Not valid JSON (${why}); write the value as JSON, text in double quotes.`;

// An approval's own controls: `actions` (its Approve and Deny buttons) gains "Deny with reason…" and, on
// an editable approval, "Edit and approve…", each revealing a form of its own, which are returned for
// the page to place under the card's form. `send(decision, panel)` sends {answer: "Approve"|"Deny",
// note?, arguments?} from `panel`, whose `showRefusal` says what the gateway did not take.
function decisionControls(prompt, actions, send) {
  const panels = [reasonPanel(prompt, send)];
  if (prompt.editable && prompt.tool_call) panels.push(editPanel(prompt, send));
  const toggles = panels.map((panel, index) =>
    el("button", { type: "button", class: index ? "secondary" : "deny" }, index ? "Edit and approve…" : "Deny with reason…"),
  );
  actions.append(...toggles);
  panels.forEach((panel, index) => disclose(toggles[index], panel, () => panels.forEach((other, at) => at !== index && hidePanel(toggles[at], other))));
  return panels;
}

// A button that shows `panel` (aria-expanded, aria-controls) and moves the focus to its first field;
// Escape or the panel's Cancel hide it again and give the focus back. `opening` closes the others.
function disclose(toggle, panel, opening) {
  toggle.setAttribute("aria-expanded", "false");
  toggle.setAttribute("aria-controls", panel.id);
  toggle.addEventListener("click", () => {
    if (!panel.hidden) return hidePanel(toggle, panel, true);
    opening();
    panel.hidden = false;
    toggle.setAttribute("aria-expanded", "true");
    (firstControl(panel) || toggle).focus();
  });
  panel.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    event.preventDefault();
    hidePanel(toggle, panel, true);
  });
  panel.querySelector("button.cancel").addEventListener("click", () => hidePanel(toggle, panel, true));
}

function hidePanel(toggle, panel, refocus = false) {
  panel.hidden = true;
  toggle.setAttribute("aria-expanded", "false");
  if (refocus) toggle.focus();
}

function panelActions(submitLabel, submitClass) {
  return [
    el(
      "div",
      { class: "actions" },
      el("button", { type: "submit", class: submitClass }, submitLabel),
      el("button", { type: "button", class: "secondary cancel" }, "Cancel"),
    ),
    el("p", { class: "refusal", role: "alert", hidden: true }),
  ];
}

// Deny with a reason: a labelled text box; its words reach the agent as the prompt's note.
function reasonPanel(prompt, send) {
  const id = `${prompt.prompt_id}-reason`;
  const box = el("textarea", { id: `${id}-note`, name: "note", rows: 2, maxLength: MAX_NOTE_CHARS, required: true });
  const form = el(
    "form",
    { class: "panel reason", id, hidden: true },
    el("label", { for: box.id }, "Why deny it? The agent is told."),
    box,
    ...panelActions("Deny with this reason", "deny"),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const note = box.value.trim();
    if (!note) return showRefusal(form, "Write why you deny it, or press Deny to deny without a reason.");
    send({ answer: "Deny", note }, form);
  });
  return form;
}

// Edit and approve: one input per argument of the call (and per property its schema adds), typed as
// the schema (else the value) says; Approve sends the arguments as edited, which the gateway checks.
function editPanel(prompt, send) {
  const id = `${prompt.prompt_id}-edit`;
  const fields = argumentFields(prompt.tool_call, prompt.input_schema);
  const form = el(
    "form",
    { class: "panel edit", id, hidden: true },
    el("p", { class: "hint" }, `Change the arguments of ${prompt.tool_call.name}, then approve the call as edited.`),
    ...fields.map((field, index) => argumentField(id, field, index)),
    ...panelActions("Approve edited call", ""),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    const { values, problems } = editedArguments(form, fields);
    if (problems.length) return showRefusal(form, "Some arguments cannot be read; fix them and approve again.", problems);
    send({ answer: "Approve", arguments: values }, form);
  });
  return form;
}

function jsonType(value) {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

// The call's arguments, then any property its schema declares that the call left out:
// [{name, prop, given, value, required, type}], `type` being how the field is edited.
function argumentFields(toolCall, schema) {
  const args = toolCall.arguments || {};
  const props = schema && schema.properties && typeof schema.properties === "object" ? schema.properties : {};
  const required = new Set((schema && Array.isArray(schema.required) && schema.required) || []);
  const names = [...Object.keys(args), ...Object.keys(props).filter((name) => !(name in args))];
  return names.map((name) => {
    const prop = props[name] && typeof props[name] === "object" ? props[name] : {};
    const given = name in args;
    const declared = typeof prop.type === "string" ? prop.type : null;
    let type = declared || (given ? jsonType(args[name]) : "json");
    const numeric = (t) => t === "integer" || t === "number";
    if (given && declared && declared !== jsonType(args[name]) && !(numeric(declared) && numeric(jsonType(args[name])))) {
      type = "json"; // the call does not match its own schema: edit it as it is
    }
    if (!["string", "integer", "number", "boolean"].includes(type)) type = "json";
    return { name, prop, given, value: args[name], required: required.has(name), type };
  });
}

// One argument as a block: its label, its input, a hint and a slot for the gateway's problem with it,
// both tied to the input (aria-describedby).
function argumentField(formId, field, index) {
  const id = `${formId}-${index}`;
  const { prop } = field;
  const optional = !field.required && field.type !== "boolean";
  const hints = [prop.description, field.type === "json" ? "as JSON" : null, optional ? "optional" : null];
  const hintText = hints.filter(Boolean).join(" · ");
  const hint = hintText ? el("small", { class: "hint", id: `${id}-hint` }, hintText) : null;
  const problem = el("small", { class: "problem", id: `${id}-problem`, hidden: true });
  const title = typeof prop.title === "string" && prop.title !== field.name ? `${prop.title} (${field.name})` : field.name;
  const shown = field.given ? field.value : prop.default;
  let control;
  if (field.type === "boolean") {
    control = el("input", { type: "checkbox", id, name: field.name, checked: shown === true });
  } else if (field.type === "integer" || field.type === "number") {
    control = el("input", { type: "number", id, name: field.name, step: field.type === "integer" ? "1" : "any" });
    control.value = typeof shown === "number" ? String(shown) : "";
  } else if (field.type === "string") {
    const text = typeof shown === "string" ? shown : "";
    const long = text.includes("\n") || text.length > 60;
    control = long
      ? el("textarea", { id, name: field.name, rows: Math.min(8, text.split("\n").length + 1) })
      : el("input", { type: "text", id, name: field.name });
    control.value = text;
  } else {
    const text = shown === undefined ? "" : JSON.stringify(shown, null, 2);
    control = el("textarea", { id, name: field.name, class: "json", rows: Math.min(8, text.split("\n").length + 1) });
    control.value = text;
  }
  control.spellcheck = false;
  control.setAttribute("aria-describedby", [hint && hint.id, problem.id].filter(Boolean).join(" "));
  const labelled =
    field.type === "boolean"
      ? [el("label", { class: "choice" }, control, el("span", {}, title))]
      : [el("label", { for: id }, title), control];
  return el("div", { class: "field", dataset: { argument: field.name } }, ...labelled, hint, problem);
}

// The arguments the edit form holds, typed; an argument the call did not have is left out while left
// empty. `problems` ([{field, problem}]) are those that cannot be read (JSON that does not parse).
function editedArguments(form, fields) {
  const values = {};
  const problems = [];
  const blocks = form.querySelectorAll(".field");
  fields.forEach((field, index) => {
    const control = blocks[index].querySelector("input, textarea");
    if (field.type === "boolean") {
      if (field.given || control.checked) values[field.name] = control.checked;
    } else if (field.type === "integer" || field.type === "number") {
      if (control.validity.badInput) problems.push({ field: field.name, problem: NOT_A_NUMBER });
      else if (control.value !== "") values[field.name] = Number(control.value);
    } else if (field.type === "string") {
      if (field.given || control.value !== "") values[field.name] = control.value;
    } else if (control.value.trim() !== "") {
      try {
        values[field.name] = JSON.parse(control.value);
      } catch (error) {
        problems.push({ field: field.name, problem: notJson(error.message) });
      }
    }
  });
  return { values, problems };
}

// What the gateway (or the panel itself) did not take: `message` in the panel's alert, and each of
// `errors` ([{field} or {property}, problem], a path like "options.retries" naming its argument) by its
// argument's input, the focus on the first such input (else the panel's first control).
function showRefusal(panel, message, errors = []) {
  const alert = panel.querySelector(".refusal");
  alert.textContent = inPlainWords(message);
  alert.hidden = false;
  const first = markArgumentProblems(panel, errors);
  (first || firstControl(panel) || alert).focus();
}

function clearRefusal(panel) {
  panel.querySelector(".refusal").hidden = true;
  markArgumentProblems(panel, []);
}

function markArgumentProblems(panel, errors) {
  const blocks = [...panel.querySelectorAll(".field[data-argument]")];
  const names = blocks.map((block) => block.dataset.argument).sort((a, b) => b.length - a.length);
  const byName = new Map();
  for (const error of errors || []) {
    const path = error.field || error.property || "";
    const name = names.find((candidate) => path === candidate || path.startsWith(`${candidate}.`));
    if (name === undefined) continue;
    byName.set(name, [...(byName.get(name) || []), `${path}: ${inPlainWords(error.problem)}`]);
  }
  let first = null;
  for (const block of blocks) {
    const problems = byName.get(block.dataset.argument);
    const slot = block.querySelector(".problem");
    slot.textContent = problems ? problems.join("; ") : "";
    slot.hidden = !problems;
    const control = block.querySelector("input, textarea");
    if (problems) control.setAttribute("aria-invalid", "true");
    else control.removeAttribute("aria-invalid");
    if (problems && !first) first = control;
  }
  return first;
}

// "Approved 1 of 2: web:alice", as the gateway words an approval's votes so far (its "votes" item).
function votesText(approvals, votes) {
  const approving = (votes || []).filter((vote) => vote.answer === "Approve" && vote.counted !== false);
  const names = approving.map((vote) => vote.by).join(", ") || "nobody yet";
  return `Approved ${approving.length} of ${approvals}: ${names}`;
}

// The line an approval needing several approvers keeps its votes on.
function votesLine(approvals, votes = []) {
  return el("p", { class: "votes" }, votesText(approvals, votes));
}

function showVotes(card, text) {
  const line = card.querySelector(".votes");
  if (line) line.textContent = text;
}

// Once settled: the call as allowed, under the call as asked, when the person edited it.
function showAllowed(card, prompt) {
  if (!wasEdited(prompt) || card.querySelector(".allowed")) return;
  const block = el(
    "div",
    { class: "allowed" },
    el("p", { class: "allowed-label" }, "Allowed, edited:"),
    toolCallBlock(prompt.approved_call, "Allowed call (edited)"),
  );
  card.querySelector(".outcome").before(block);
}
