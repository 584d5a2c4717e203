// Threadgate web chat: signs in, streams the thread's item log (Server-Sent Events over fetch, so the
// access token travels in a header), renders prompts with native controls, and posts replies.
"use strict";

const room = document.body.dataset.room;
const needsToken = document.body.dataset.signIn === "token";
const base = `/chat/${encodeURIComponent(room)}`;
const saved = `threadgate.chat.${room}`;
const $ = (id) => document.getElementById(id);
const prompts = new Map(); // prompt_id -> the prompt's list element
let me = null; // {name, token}
let cursor = null;
let following = false;

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

function headers(extra = {}) {
  const all = { ...extra };
  if (me && me.token) all.Authorization = `Bearer ${me.token}`;
  return all;
}

function setStatus(text, live = false) {
  $("status").textContent = text;
  $("status").classList.toggle("live", live);
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
  me = { name: body.name, token: token || null };
  localStorage.setItem(saved, JSON.stringify(me));
  $("sign-in").hidden = true;
  $("composer").hidden = false;
  $("who").hidden = false;
  $("who").textContent = `signed in as ${body.identity}`;
  $("sign-out").hidden = false;
  $("text").focus();
  if (!following) follow();
}

function showSignIn(message) {
  me = null;
  $("sign-in").hidden = false;
  $("composer").hidden = true;
  $("who").hidden = true;
  $("sign-out").hidden = true;
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

$("sign-out").addEventListener("click", () => {
  localStorage.removeItem(saved);
  showSignIn("");
});

// The live log -------------------------------------------------------------------------------------

async function follow() {
  following = true;
  while (me) {
    try {
      const response = await fetch(`${base}/events`, {
        headers: headers(cursor ? { "Last-Event-ID": cursor } : {}),
      });
      if (response.status === 401) {
        showSignIn("Your access token is no longer accepted; sign in again.");
        break;
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      setStatus("live", true);
      await readEvents(response.body.getReader());
    } catch (error) {
      // dropped connection or gateway restart: resume after the last item seen
    }
    setStatus("reconnecting…");
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  following = false;
}

async function readEvents(reader) {
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim());
      if (data.length) {
        const item = JSON.parse(data.join("\n"));
        cursor = item.id;
        render(item);
      }
    }
  }
}

function textOf(item) {
  if (item.content && item.content.length) return item.content.map((part) => part.text).join("\n");
  return item.text || "";
}

function render(item) {
  const log = $("log");
  const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  let node;
  if (item.type === "pending_prompt") node = promptCard(item);
  else if (item.type === "pending_prompt_resolved") node = auditLine(item);
  else node = messageBubble(item);
  node.dataset.itemId = item.id;
  log.append(node);
  if (atBottom) node.scrollIntoView({ block: "end" });
}

function messageBubble(item) {
  const person = item.role === "person";
  const sender = person ? (item.sender || "").replace(/^web:/, "") : "agent";
  const mine = person && me && sender === me.name;
  return el(
    "li",
    { class: `item ${person ? "person" : "agent"}${mine ? " mine" : ""}` },
    el("div", { class: "from" }, mine ? `${sender} (you)` : sender),
    el("div", { class: "bubble" }, textOf(item)),
  );
}

function auditLine(item) {
  const meta = (item.metadata && item.metadata.prompt) || {};
  const card = prompts.get(meta.prompt_id);
  if (card) settle(card, meta, textOf(item));
  return el("li", { class: `item audit ${meta.prompt_state || ""}`, dataset: { promptId: meta.prompt_id || "" } }, textOf(item));
}

function settle(card, meta, text) {
  card.classList.add("settled");
  if (meta.prompt_state) card.classList.add(meta.prompt_state);
  for (const control of card.querySelectorAll("input, textarea, button")) control.disabled = true;
  const outcome = card.querySelector(".outcome");
  outcome.textContent = text;
  outcome.className = `outcome ${meta.prompt_state || ""}`;
  outcome.hidden = false;
}

// Prompts with native controls ---------------------------------------------------------------------

const KIND_TITLES = { approval: "Approval needed", ask_user_question: "Question", text: "Question" };

function promptCard(item) {
  const meta = (item.metadata && item.metadata.prompt) || {};
  const questions = meta.questions || [];
  const card = el("li", { class: "item prompt", dataset: { promptId: meta.prompt_id || "", kind: meta.kind || "" } });
  card.append(el("p", { class: "kind" }, KIND_TITLES[meta.kind] || "Question"));
  if (meta.tool_call) {
    card.append(
      el(
        "pre",
        { class: "tool", "aria-label": "Tool call" },
        el("span", { class: "name" }, meta.tool_call.name),
        `(${JSON.stringify(meta.tool_call.arguments || {}, null, 2)})`,
      ),
    );
  }
  card.append(el("p", { class: "text" }, textOf(item)));
  const form = el("form", { class: "answer" });
  if (meta.kind === "approval") {
    form.append(
      el(
        "div",
        { class: "actions" },
        el("button", { type: "submit", value: "Approve", name: "decision" }, "Approve"),
        el("button", { type: "submit", value: "Deny", name: "decision", class: "deny" }, "Deny"),
      ),
    );
  } else {
    questions.forEach((question, index) => form.append(questionField(meta.prompt_id, question, index)));
    form.append(el("div", { class: "actions" }, el("button", { type: "submit" }, "Send answer")));
  }
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submitAnswers(meta, questions, form, event.submitter);
  });
  card.append(form, el("p", { class: "outcome", role: "status", hidden: true }));
  prompts.set(meta.prompt_id, card);
  return card;
}

function questionId(question, index) {
  return question.id || `q${index + 1}`;
}

function questionField(promptId, question, index) {
  const id = questionId(question, index);
  const name = `${promptId}-${id}`;
  const legend = el("legend", {}, question.question, question.header ? el("span", { class: "header" }, question.header) : null);
  const field = el("fieldset", { dataset: { questionId: id } }, legend);
  const options = question.options || [];
  if (!options.length) {
    field.append(el("textarea", { name, rows: 2, "aria-label": question.question, placeholder: "Your answer" }));
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

function collect(questions, form) {
  const answers = [];
  for (const [index, question] of questions.entries()) {
    const id = questionId(question, index);
    const field = form.querySelector(`fieldset[data-question-id="${CSS.escape(id)}"]`);
    const options = question.options || [];
    let answer;
    if (!options.length) {
      const text = field.querySelector("textarea").value.trim();
      if (!text) throw new Error(`Answer “${question.question}” first.`);
      answer = [text];
    } else {
      answer = [...field.querySelectorAll("input:checked")].map((input) => input.value);
      const other = field.querySelector("input.other").value.trim();
      if (other) answer.push(other);
      if (!question.multiSelect && answer.length !== 1) {
        throw new Error(`Pick one answer to “${question.question}” (an option, or Other).`);
      }
    }
    answers.push({ question_id: id, answer });
  }
  return answers;
}

async function submitAnswers(meta, questions, form, submitter) {
  let answers;
  try {
    answers =
      meta.kind === "approval"
        ? [{ question_id: questionId(questions[0], 0), answer: [submitter.value] }]
        : collect(questions, form);
  } catch (error) {
    notify(error.message);
    return;
  }
  const summary = answers.map((entry) => (entry.answer.length ? entry.answer.join(", ") : "(no selection)")).join(" · ");
  await send({ text: summary, answers, prompt_id: meta.prompt_id });
}

// Sending ------------------------------------------------------------------------------------------

async function send(message) {
  notify("");
  const clientId = (crypto.randomUUID && crypto.randomUUID()) || `${Date.now()}-${Math.random()}`;
  try {
    const response = await fetch(`${base}/messages`, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: JSON.stringify({ name: me.name, client_id: clientId, ...message }),
    });
    const body = await response.json();
    if (response.status === 401) return showSignIn(body.error.message);
    if (!response.ok) return notify(body.error ? body.error.message : `HTTP ${response.status}`);
    if (body.notice) notify(body.notice);
    return body;
  } catch (error) {
    notify("The message was not sent: the gateway cannot be reached. Try again in a moment.");
  }
}

$("composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const text = $("text").value;
  if (!text.trim()) return;
  const sent = await send({ text });
  if (sent) $("text").value = "";
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
