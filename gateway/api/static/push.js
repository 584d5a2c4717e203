// Web Push for a signed-in person (docs/push.md): registers the inbox's service worker, offers
// "Notify this device" when the gateway sends push, and brings a prompt named in the address
// (#prompt=<id>, where a notification's tap lands) into view.
"use strict";

(() => {
  const asBytes = (base64url) => {
    const text = atob(base64url.replace(/-/g, "+").replace(/_/g, "/") + "=".repeat((4 - base64url.length % 4) % 4));
    return Uint8Array.from(text, (char) => char.charCodeAt(0));
  };
  const json = { "Content-Type": "application/json" };

  async function offer() {
    if (!("serviceWorker" in navigator) || !("PushManager" in window)) return; // iOS: add to Home Screen first
    const state = await fetch("/v1/me/push").then((r) => (r.ok ? r.json() : null)).catch(() => null);
    if (!state || !state.enabled) return; // not signed in, or push is off here
    const registration = await navigator.serviceWorker.register("/inbox-sw.js", { scope: "/" });
    const button = document.createElement("button");
    button.type = "button";
    button.id = "push";
    button.className = "link";
    document.querySelector("header.bar")?.append(button);
    const show = async () => {
      const current = await registration.pushManager.getSubscription();
      button.textContent = current ? "Stop notifications on this device" : "Notify this device";
      button.setAttribute("aria-pressed", current ? "true" : "false");
    };
    button.addEventListener("click", async () => {
      button.disabled = true;
      try {
        const current = await registration.pushManager.getSubscription();
        if (current) {
          await fetch("/v1/me/push", { method: "DELETE", headers: json, body: JSON.stringify({ endpoint: current.endpoint }) });
          await current.unsubscribe();
        } else if ((await Notification.requestPermission()) === "granted") {
          const made = await registration.pushManager.subscribe({
            userVisibleOnly: true,
            applicationServerKey: asBytes(state.public_key),
          });
          await fetch("/v1/me/push", { method: "POST", headers: json, body: JSON.stringify(made.toJSON()) });
        }
      } finally {
        button.disabled = false;
        await show();
      }
    });
    await show();
  }

  // A notification's tap opens /inbox#prompt=<id>: once that prompt's card is on the page, show it.
  function reveal() {
    const wanted = new URLSearchParams(location.hash.slice(1)).get("prompt");
    if (!wanted) return;
    const find = () => [...document.querySelectorAll("[data-prompt-id]")].find((card) => card.dataset.promptId === wanted);
    let tries = 0;
    const look = () => {
      const card = find();
      if (card) {
        card.scrollIntoView({ block: "center" });
        card.classList.add("wanted");
        card.querySelector("button, input, select, textarea")?.focus({ preventScroll: true });
      } else if (++tries < 50) {
        setTimeout(look, 200);
      }
    };
    look();
  }

  window.addEventListener("hashchange", reveal);
  document.addEventListener("DOMContentLoaded", () => {
    reveal();
    offer().catch(() => {}); // push is a convenience: the inbox works without it
  });
})();
