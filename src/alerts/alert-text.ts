import type { AlertEvent } from "./alert-event.ts";

/** `[CRITICAL] firing: …` / `[CRITICAL] resolved: …`: the one line every channel leads with. */
export function alertHeadline(event: AlertEvent): string {
  return `[${event.severity.toUpperCase()}] ${event.state === "firing" ? "firing" : "resolved"}: ${event.title}`;
}

/** Facts read first; the others follow by name (an alert kept in Redis comes back in no particular order). */
const FIRST = ["job", "queue", "code", "runId"];

/** The facts as `name: value` lines, in a stable order. */
export function factLines(event: AlertEvent): string[] {
  const rank = (k: string) => (FIRST.includes(k) ? FIRST.indexOf(k) : FIRST.length);
  return Object.entries(event.facts)
    .filter(([, v]) => v !== null && v !== "")
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([k, v]) => `${k}: ${String(v)}`);
}

/** A plain-text body (email): headline, facts, where it came from. */
export function alertText(event: AlertEvent): string {
  return [
    alertHeadline(event),
    "",
    ...factLines(event),
    "",
    `rule: ${event.rule}`,
    `subject: ${event.subject}`,
    `at: ${event.at}`,
    `source: recruit-sync under Redis prefix ${event.source}`,
    `alert id: ${event.id}`,
  ].join("\n");
}

/** A Slack incoming webhook's body: `text` for notifications, `blocks` for the message. */
export function slackBody(event: AlertEvent): { text: string; blocks: unknown[] } {
  const headline = alertHeadline(event);
  return {
    text: headline,
    blocks: [
      { type: "header", text: { type: "plain_text", text: headline.slice(0, 150) } },
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text:
            factLines(event)
              .map((l) => `• ${escapeMrkdwn(l)}`)
              .join("\n") || " ",
        },
      },
      {
        type: "context",
        elements: [
          {
            type: "mrkdwn",
            text: escapeMrkdwn(`${event.rule} · ${event.source} · ${event.at} · ${event.id}`),
          },
        ],
      },
    ],
  };
}

/** Slack reads &, < and > as markup. */
function escapeMrkdwn(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}
