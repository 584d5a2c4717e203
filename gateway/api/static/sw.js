// The inbox's service worker: shows a Web Push notification for a prompt, and opens the prompt on a tap.
// A notification carries the agent, a short summary and the prompt's id, never the tool's input.
"use strict";

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("push", (event) => {
  let shown = { title: "Threadgate", body: "A prompt is waiting for you.", url: "/inbox" };
  try {
    shown = { ...shown, ...event.data.json() };
  } catch (error) {
    // a message we cannot read still says something is waiting
  }
  event.waitUntil(
    self.registration.showNotification(shown.title, {
      body: shown.body,
      tag: shown.tag || undefined, // a repeat of the same prompt replaces the first
      icon: "/inbox-assets/icon.svg",
      data: { url: shown.url },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const target = new URL(event.notification.data?.url || "/inbox", self.location.origin);
  if (target.origin !== self.location.origin) return; // only ever opens this gateway's pages
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    for (const client of open) {
      if (new URL(client.url).pathname === target.pathname && "focus" in client) {
        await client.navigate(target.href);
        return client.focus();
      }
    }
    return self.clients.openWindow(target.href);
  })());
});
