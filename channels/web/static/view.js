// Threadgate web chat: where the view stays. At the newest item while the reader is there, so new cards
// arrive in view; once they scroll up, a "New items below" button says more came. A room opens at its
// newest item, or at its open card when that is out of view.
"use strict";

let pinned = true; // the reader is at the newest item: new items keep the view there
let pinnedAt = 0; // where the page last put the view to keep it at the bottom
let opening = true; // the room's backlog is arriving: once it has, the open card is brought into view
let openingTimer = null;

function bottomY() {
  return document.documentElement.scrollHeight - window.innerHeight;
}

function toBottom() {
  window.scrollTo(0, bottomY());
  pinnedAt = window.scrollY;
  $("new-items").hidden = true;
}

// Called after the log grew or changed: the view follows it, or the button says what came.
function arrived() {
  if (pinned || window.scrollY >= bottomY() - 60) toBottom();
  else $("new-items").hidden = false;
  if (opening) {
    clearTimeout(openingTimer);
    openingTimer = setTimeout(opened, 150);
  }
}

// The backlog is in: an open card whose top is out of view is brought into it (it may be taller
// than the window, or followed by messages).
function opened() {
  opening = false;
  const card = openCards().at(-1);
  if (!card) return;
  const top = card.getBoundingClientRect().top - $("bar").getBoundingClientRect().height;
  if (top < 0) {
    window.scrollBy(0, top);
    pinned = window.scrollY >= bottomY() - 2;
  }
}

// The reader moved: at the bottom, or still where the page put them while pinned, the view stays pinned;
// once they scrolled up, only coming back to the bottom pins it again.
window.addEventListener("scroll", () => {
  const atBottom = window.scrollY >= bottomY() - 60;
  pinned = atBottom || (pinned && window.scrollY >= pinnedAt - 2);
  if (atBottom) $("new-items").hidden = true;
});

// A card that settles, grows a problem line or a panel, or a narrower window: still at the bottom.
new ResizeObserver(() => {
  if (pinned) toBottom();
}).observe($("log"));
window.addEventListener("resize", () => {
  if (pinned) toBottom();
});

$("new-items").addEventListener("click", () => {
  pinned = true;
  toBottom();
  const newest = $("log").lastElementChild;
  if (newest) (firstControl(newest) || $("text")).focus({ preventScroll: true });
});
