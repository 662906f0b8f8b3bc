import type { AlertChannelConfig, AlertsConfig } from "../../config/index.ts";
import { AlertDeliveryError } from "../../errors/index.ts";
import type { AlertEvent } from "../alert-event.ts";
import { alertHeadline, alertText, slackBody } from "../alert-text.ts";
import { SIGNATURE_HEADER, signatureHeader } from "../signature.ts";
import { hostOf, postJson } from "./post-json.ts";

/** What a channel said when it took an alert. */
export interface Delivered {
  channel: string;
  /** `200 from hooks.example.org`, `250 from smtp.example.org` */
  detail: string;
}

/** Sends one alert to one channel, or throws an AlertDeliveryError saying why not. */
export async function sendAlert(
  channel: AlertChannelConfig,
  event: AlertEvent,
  config: Pick<AlertsConfig, "secrets" | "delivery">,
): Promise<Delivered> {
  const timeoutMs = config.delivery.timeoutMs;
  switch (channel.kind) {
    case "webhook": {
      const secret = config.secrets.webhook;
      if (!secret) {
        throw new AlertDeliveryError(
          channel.name,
          `${channel.name}: no signing secret; set RECRUIT_SYNC_ALERTS_WEBHOOK_SECRET`,
          { retryable: false },
        );
      }
      const body = JSON.stringify(event);
      const status = await postJson(
        channel.name,
        channel.url,
        body,
        { [SIGNATURE_HEADER]: signatureHeader(secret, body), "recruit-sync-alert-id": event.id },
        timeoutMs,
      );
      return { channel: channel.name, detail: `${status} from ${hostOf(channel.url)}` };
    }
    case "slack": {
      const status = await postJson(
        channel.name,
        channel.url,
        JSON.stringify(slackBody(event)),
        {},
        timeoutMs,
      );
      return { channel: channel.name, detail: `${status} from ${hostOf(channel.url)}` };
    }
    case "email":
      return sendEmail(channel, event, config.secrets.smtpPassword, timeoutMs);
  }
}

async function sendEmail(
  channel: Extract<AlertChannelConfig, { kind: "email" }>,
  event: AlertEvent,
  password: string | undefined,
  timeoutMs: number,
): Promise<Delivered> {
  // Loaded when an email goes out: most processes never send one.
  const { createTransport } = await import("nodemailer");
  const transport = createTransport({
    host: channel.host,
    port: channel.port,
    secure: channel.secure,
    ...(channel.user ? { auth: { user: channel.user, pass: password ?? "" } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  try {
    const info = await transport.sendMail({
      from: channel.from,
      to: channel.to,
      subject: `recruit-sync ${alertHeadline(event)}`.slice(0, 200),
      text: alertText(event),
      headers: { "X-Recruit-Sync-Alert-Id": event.id },
    });
    const code = /^\d{3}/.exec(String(info.response ?? ""))?.[0] ?? "sent";
    return { channel: channel.name, detail: `${code} from ${channel.host}:${channel.port}` };
  } catch (err) {
    const e = err as { responseCode?: number; code?: string; message?: string };
    // A 5xx answer is a refusal that will not change (a bad sender, an unknown recipient); 4xx is try later.
    const refused = typeof e.responseCode === "number" && e.responseCode >= 500;
    const why = e.responseCode ? `answered ${e.responseCode}` : (e.code ?? e.message ?? "failed");
    throw new AlertDeliveryError(
      channel.name,
      `${channel.name}: SMTP ${channel.host}:${channel.port} ${why}`,
      {
        cause: err,
        retryable: !refused,
      },
    );
  } finally {
    transport.close();
  }
}

/** Whether a channel takes alerts of this severity. */
export function channelTakes(channel: AlertChannelConfig, event: Pick<AlertEvent, "severity">): boolean {
  return !channel.severities || channel.severities.includes(event.severity);
}
