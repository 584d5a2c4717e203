// Threadgate inbox, History view: settled prompts from GET /v1/history, newest first, filtered by agent,
// run, thread, person, outcome and time, a page at a time; prompts settled while it is open join the top.
// Uses the inbox's api(), KIND_TITLES, threadLink() and when() (inbox.js).
"use strict";

const HISTORY_PAGE = 25;
const HISTORY_READS = 10; // requests one search or "Load more" makes at most while pages come back short
const OUTCOME_TITLES = { approved: "Approved", denied: "Denied", answered: "Answered", cancelled: "Cancelled", expired: "Expired" };
const listed = new Set(); // prompt ids in the list
let historyQuery = new URLSearchParams(); // the filters of the search shown
let historyNext = null; // where "Load more" goes on
let historySearch = 0; // bumped by each search (and sign-out): a late page of an older one is dropped
let historyLoaded = false;

function showView(name) {
  const history = name === "history";
  $("pending-view").hidden = history;
  $("history-view").hidden = !history;
  $("show-pending").setAttribute("aria-pressed", String(!history));
  $("show-history").setAttribute("aria-pressed", String(history));
  if (history && !historyLoaded) searchHistory();
}

function resetHistory() {
  historySearch += 1;
  historyLoaded = false;
  historyNext = null;
  listed.clear();
  $("history").replaceChildren();
  $("history-empty").hidden = $("history-more").hidden = $("history-error").hidden = true;
  showView("pending");
}

// The filter form as the API's query: times typed in the browser's zone, sent as RFC 3339 in UTC.
function filtersOf(form) {
  const query = new URLSearchParams();
  for (const name of ["agent", "run", "thread", "by", "outcome"]) {
    const value = form.elements[name].value.trim();
    if (value) query.set(name, value);
  }
  for (const name of ["since", "until"]) {
    const value = form.elements[name].value;
    if (value) query.set(name, new Date(value).toISOString());
  }
  return query;
}

// Pages from `after` until `wanted` records or the end (a page may be short, even empty, before that).
async function readHistory(after, wanted, search) {
  const items = [];
  let next = after;
  for (let read = 0; read < HISTORY_READS; read += 1) {
    const query = new URLSearchParams(historyQuery);
    query.set("limit", String(HISTORY_PAGE));
    if (next) query.set("after", next);
    const data = await api("GET", `/v1/history?${query}`);
    if (search !== historySearch) return null;
    items.push(...data.items);
    next = data.next;
    if (!next || items.length >= wanted) break;
  }
  return { items, next };
}

async function loadHistory(after) {
  const search = historySearch;
  $("history-error").hidden = true;
  $("history-more").disabled = true;
  try {
    const page = await readHistory(after, HISTORY_PAGE, search);
    if (!page) return;
    for (const record of page.items) if (!listed.has(record.prompt_id)) $("history").append(recordCard(record));
    historyNext = page.next;
    historyLoaded = true;
    $("history-more").hidden = !historyNext;
    $("history-empty").hidden = listed.size > 0 || Boolean(historyNext);
    announce(`${listed.size} settled ${listed.size === 1 ? "prompt" : "prompts"} shown${historyNext ? "; more to load" : ""}.`);
  } catch (error) {
    if (error.status === 401) return showSignIn(error.message);
    $("history-error").textContent = `Could not load the history: ${error.message}`;
    $("history-error").hidden = false;
  } finally {
    $("history-more").disabled = false;
  }
}

function searchHistory() {
  historySearch += 1;
  historyQuery = filtersOf($("history-filters"));
  historyNext = null;
  listed.clear();
  $("history").replaceChildren();
  return loadHistory(null);
}

// A prompt settled (input.resolved): its record is written with the event, so the first page read now
// has it; records not listed yet go on top, in order. Nothing moves while another search is loading.
async function historySettled() {
  if (!historyLoaded || $("history-view").hidden) return;
  const search = historySearch;
  await new Promise((resolve) => setTimeout(resolve, 300));
  try {
    const page = await readHistory(null, 1, search);
    if (!page) return;
    const fresh = page.items.filter((record) => !listed.has(record.prompt_id));
    for (const record of fresh.reverse()) $("history").prepend(recordCard(record));
    $("history-empty").hidden = listed.size > 0 || Boolean(historyNext);
  } catch (error) {
    // the next search shows it
  }
}

function askedText(record) {
  if (record.message) return record.message;
  return (record.questions || []).map((question) => question.question).join("\n");
}

function recordCard(record) {
  listed.add(record.prompt_id);
  const titleId = `${record.prompt_id}-record`;
  const card = el("li", {
    class: "record",
    "aria-labelledby": titleId,
    dataset: { promptId: record.prompt_id, outcome: record.outcome },
  });
  card.append(
    el(
      "p",
      { class: "meta" },
      el("span", { class: "kind", id: titleId }, `${KIND_TITLES[record.kind] || record.kind} · ${OUTCOME_TITLES[record.outcome] || record.outcome}`),
      el("span", {}, "agent ", el("b", {}, record.agent)),
      el("span", {}, "thread ", threadLink(record.thread_id)),
      el("span", {}, "run ", record.run_id),
      el("span", {}, "asked ", when(record.created_at)),
      record.settled_at ? el("span", {}, "settled ", when(record.settled_at)) : null,
    ),
    el("p", { class: "asked" }, askedText(record)),
  );
  if (record.tool_call) card.append(toolCallBlock(record.tool_call));
  const edited = record.approved_call && JSON.stringify(record.approved_call) !== JSON.stringify(record.tool_call);
  if (edited) {
    const block = toolCallBlock(record.approved_call);
    block.setAttribute("aria-label", "Approved call, as edited");
    card.append(el("p", { class: "note" }, "Approved as edited:"), block);
  }
  const said = settledText(record);
  card.append(el("p", { class: `outcome ${outcomeOf(record)}` }, said));
  if (record.note && !said.includes(record.note)) card.append(el("p", { class: "note" }, `Note: ${record.note}`));
  const votes = record.votes || [];
  if (votes.length) {
    const lines = votes.map((vote) =>
      el("li", {}, `${vote.answer === "Approve" ? "✓" : "✗"} ${vote.answer} by ${vote.by} `, when(vote.at), vote.note ? ` — ${vote.note}` : ""),
    );
    card.append(el("ul", { class: "votes", "aria-label": "Votes" }, ...lines));
  }
  const escalations = (record.escalations || []).length;
  const grants = (record.grants_used || []).length;
  if (escalations) card.append(el("p", { class: "note" }, `Escalated ${escalations} ${escalations === 1 ? "time" : "times"}.`));
  if (grants) card.append(el("p", { class: "note" }, `Grants used: ${grants}.`));
  if (record.truncated) card.append(el("p", { class: "hint" }, "Long texts or arguments were cut to keep this record small."));
  return card;
}

$("show-pending").addEventListener("click", () => showView("pending"));
$("show-history").addEventListener("click", () => showView("history"));
$("history-filters").addEventListener("submit", (event) => {
  event.preventDefault();
  searchHistory();
});
$("history-clear").addEventListener("click", () => {
  $("history-filters").reset();
  searchHistory();
});
$("history-more").addEventListener("click", () => loadHistory(historyNext));
