// Threadgate pages' form prompts and URL steps, the same on the chat page and in the operator inbox: a
// flat form (MCP elicitation's form mode) as HTML inputs carrying its schema's constraints, read back as
// typed content or as answers as shown; a URL step's link. The gateway's one validator still decides:
// the attributes only help the browser say early what the gateway would say anyway.
"use strict";

const FORMAT_TYPES = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

// The choices of an enum, oneOf, items.enum or items.anyOf property, in order: [{value, label}].
function formChoices(prop) {
  const source = prop.type === "array" ? prop.items || {} : prop;
  const consts = source.oneOf || source.anyOf;
  if (consts) return consts.map((entry) => ({ value: entry.const, label: entry.title || entry.const }));
  const names = source.enumNames || [];
  return (source.enum || []).map((value, index) => ({ value, label: names[index] || value }));
}

// The form's properties in order: [{name, prop, required, title}].
function formFields(schema) {
  const required = new Set(schema.required || []);
  return Object.entries(schema.properties || {}).map(([name, prop]) => ({
    name,
    prop,
    required: required.has(name),
    title: prop.title || name,
  }));
}

// "2025-01-31T09:30:00Z" as a datetime-local input shows it: the browser's local time, to the minute.
function localDateTime(iso) {
  const moment = new Date(iso);
  if (Number.isNaN(moment.getTime())) return "";
  const pad = (n) => String(n).padStart(2, "0");
  return `${moment.getFullYear()}-${pad(moment.getMonth() + 1)}-${pad(moment.getDate())}T${pad(moment.getHours())}:${pad(moment.getMinutes())}`;
}

function fieldInput(field, id) {
  const { prop, required } = field;
  const choices = formChoices(prop);
  if (prop.type === "string" && choices.length) {
    const select = el("select", { id, name: field.name, required });
    select.append(el("option", { value: "" }, required ? "Choose…" : "(none)"));
    for (const choice of choices) {
      select.append(el("option", { value: choice.value, selected: choice.value === prop.default }, choice.label));
    }
    return select;
  }
  const attrs = { id, name: field.name, required };
  if (prop.type === "number" || prop.type === "integer") {
    Object.assign(attrs, { type: "number", step: prop.type === "integer" ? "1" : "any" });
    if (prop.minimum != null) attrs.min = String(prop.minimum);
    if (prop.maximum != null) attrs.max = String(prop.maximum);
    if (prop.default != null) attrs.value = String(prop.default);
    return el("input", attrs);
  }
  attrs.type = FORMAT_TYPES[prop.format] || "text";
  if (prop.minLength != null) attrs.minLength = prop.minLength;
  if (prop.maxLength != null) attrs.maxLength = prop.maxLength;
  if (prop.default != null) attrs.value = prop.format === "date-time" ? localDateTime(prop.default) : prop.default;
  return el("input", attrs);
}

function fieldHint(field, id) {
  const parts = [];
  if (field.prop.description) parts.push(field.prop.description);
  const { minItems, maxItems } = field.prop;
  if (minItems != null && maxItems != null) parts.push(`pick ${minItems} to ${maxItems}`);
  else if (minItems != null) parts.push(`pick at least ${minItems}`);
  else if (maxItems != null) parts.push(`pick at most ${maxItems}`);
  if (!field.required && field.prop.type !== "boolean") parts.push("optional");
  return parts.length ? el("small", { class: "hint", id }, parts.join(" · ")) : null;
}

// One property as a block: a labelled input (select for choices), a checkbox for a boolean, a group of
// checkboxes for a multi-select; then its description and a slot for the gateway's problem with it,
// both tied to the inputs (aria-describedby) so a screen reader reads them with the field.
function formField(promptId, field) {
  const id = `${promptId}-${field.name}`;
  const hint = fieldHint(field, `${id}-hint`);
  const describedBy = [hint ? hint.id : null, `${id}-problem`].filter(Boolean).join(" ");
  const block = (control) => {
    for (const input of control.flatMap((node) => [node, ...node.querySelectorAll("input, select")])) {
      if (input.matches("input, select")) input.setAttribute("aria-describedby", describedBy);
    }
    return el(
      "div",
      { class: "field", dataset: { property: field.name } },
      ...control,
      hint,
      el("small", { class: "problem", id: `${id}-problem`, hidden: true }),
    );
  };
  if (field.prop.type === "boolean") {
    const box = el("input", { type: "checkbox", id, name: field.name, checked: field.prop.default === true });
    return block([el("label", { class: "choice" }, box, el("span", {}, field.title))]);
  }
  if (field.prop.type === "array") {
    const { minItems, maxItems } = field.prop;
    const group = el("fieldset", { class: "group", dataset: { minItems: minItems ?? "", maxItems: maxItems ?? "" } });
    group.append(el("legend", {}, field.title));
    const chosen = new Set(field.prop.default || []);
    for (const choice of formChoices(field.prop)) {
      const box = el("input", { type: "checkbox", name: field.name, value: choice.value, checked: chosen.has(choice.value) });
      group.append(el("label", { class: "choice" }, box, el("span", {}, choice.label)));
    }
    return block([group]);
  }
  return block([el("label", { for: id }, field.title), fieldInput(field, id)]);
}

// The form's fields, one block per property, to put in a <form>.
function formBlocks(promptId, schema) {
  return formFields(schema).map((field) => formField(promptId, field));
}

// A property's value as the form holds it, typed as the schema says; undefined when left empty.
function fieldValue(form, field) {
  const block = form.querySelector(`.field[data-property="${CSS.escape(field.name)}"]`);
  const { prop } = field;
  if (prop.type === "boolean") return block.querySelector("input").checked;
  if (prop.type === "array") {
    const picked = [...block.querySelectorAll("input:checked")].map((box) => box.value);
    return picked.length || field.required ? picked : undefined;
  }
  const raw = block.querySelector("input, select").value;
  if (raw === "") return undefined;
  if (prop.type === "number" || prop.type === "integer") return Number(raw);
  if (prop.format === "date-time") {
    const moment = new Date(raw); // the browser's local time, sent with its offset as the schema asks
    return Number.isNaN(moment.getTime()) ? raw : moment.toISOString().replace(".000Z", "Z");
  }
  return raw;
}

// The typed content the form holds ({property: value}), as the API's accept takes it.
function formContent(form, schema) {
  const content = {};
  for (const field of formFields(schema)) {
    const value = fieldValue(form, field);
    if (value !== undefined) content[field.name] = value;
  }
  return content;
}

// Put typed content back into the form's inputs (an answered form shows the values given).
function showFormContent(form, schema, content) {
  for (const field of formFields(schema)) {
    if (!(field.name in content)) continue;
    const value = content[field.name];
    const block = form.querySelector(`.field[data-property="${CSS.escape(field.name)}"]`);
    if (!block) continue;
    if (field.prop.type === "boolean") block.querySelector("input").checked = value === true;
    else if (field.prop.type === "array") {
      const chosen = new Set(Array.isArray(value) ? value.map(String) : []);
      for (const box of block.querySelectorAll("input")) box.checked = chosen.has(box.value);
    } else {
      const input = block.querySelector("input, select");
      input.value = field.prop.format === "date-time" ? localDateTime(value) : String(value);
    }
  }
}

// The same content as structured answers, one per property, as people see them: a choice by its title
// (one entry each, so a title may hold commas or spaces), yes/no for a boolean. The gateway turns them
// back into typed values with the validator every chat reply goes through.
function formAnswers(form, schema) {
  return formFields(schema).map((field) => {
    const value = fieldValue(form, field);
    const values = (choice) => {
      const entry = formChoices(field.prop).find((option) => option.value === choice);
      return entry ? entry.label.trim() : choice;
    };
    let answer;
    if (value === undefined) answer = [];
    else if (field.prop.type === "boolean") answer = [value ? "yes" : "no"];
    else if (field.prop.type === "array") answer = value.map(values);
    else if (formChoices(field.prop).length) answer = [values(value)];
    else answer = [String(value)];
    return { question_id: field.name, answer };
  });
}

// Show the gateway's problem with each property by its field ([{property, problem}]), in people's
// words; none clears them. Returns the first field's input that has a problem, for the caller to focus.
function markProblems(form, errors) {
  const byName = new Map((errors || []).map((error) => [error.property, error.problem]));
  let first = null;
  for (const block of form.querySelectorAll(".field")) {
    const problem = byName.get(block.dataset.property);
    const slot = block.querySelector(".problem");
    slot.textContent = problem ? `${block.querySelector("label, legend").textContent} ${inPlainWords(problem)}` : "";
    slot.hidden = !problem;
    for (const input of block.querySelectorAll("input, select")) {
      if (problem) input.setAttribute("aria-invalid", "true");
      else input.removeAttribute("aria-invalid");
      if (problem && !first) first = input;
    }
  }
  return first;
}

// A URL step's link: opens in a new tab that cannot reach back into this page.
function stepLink(url) {
  return el("p", { class: "step-link" }, el("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, url));
}
