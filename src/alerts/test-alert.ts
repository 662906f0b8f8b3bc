import type { RuntimeConfig } from "../config/index.ts";
import type { AlertEvent } from "./alert-event.ts";
import { sendAlert } from "./channels/send-alert.ts";

/** The alert `recruit-sync alerts test` sends: made up, and saying so. */
export function sampleAlert(prefix: string, now = Date.now()): AlertEvent {
  return {
    id: `alert-test-${now}`,
    rule: "test",
    subject: "recruit-sync alerts test",
    state: "firing",
    severity: "info",
    title: "a test alert from recruit-sync alerts test: this channel works",
    facts: { job: "example-job", queue: "exports", code: "test", rejected: 0 },
    at: new Date(now).toISOString(),
    seq: 0,
    source: prefix,
  };
}

/** What each channel did with the test alert. */
export interface ChannelResult {
  channel: string;
  kind: string;
  delivered: boolean;
  detail: string;
}

/**
 * Sends the sample alert to every configured channel at once, directly (not
 * through the queue: the person waits for the answer), and says per channel
 * whether it was delivered and why not.
 */
export async function testChannels(config: RuntimeConfig): Promise<ChannelResult[]> {
  const event = sampleAlert(config.redis.prefix);
  return Promise.all(
    config.alerts.channels.map(async (channel) => {
      try {
        const delivered = await sendAlert(channel, event, config.alerts);
        return { channel: channel.name, kind: channel.kind, delivered: true, detail: delivered.detail };
      } catch (err) {
        return {
          channel: channel.name,
          kind: channel.kind,
          delivered: false,
          detail: err instanceof Error ? err.message : String(err),
        };
      }
    }),
  );
}
