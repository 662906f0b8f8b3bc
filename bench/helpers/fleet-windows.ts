/**
 * The emulator's rate windows, rebuilt from its request journal
 * (GET /__emulator/requests/journal) after a run: every answer with the
 * epoch ms it was recorded at, in the order the emulator took them.
 *
 * The emulator opens a window with the first request after the last one
 * ended, and a change of its limit through the admin API ends the current
 * window at once (the next request opens one with the new quota). An answer
 * is recorded a millisecond or two after its request took from the quota, so
 * a request taken just before a window's end can be recorded just after it;
 * the emulator never serves more than a window's quota, so a served answer
 * that would overfill a window within SLOP_MS of its end belongs to the next.
 */
import { z } from "zod";

export const JournalEntry = z.object({
  seq: z.number(),
  at: z.number(),
  route: z.string(),
  status: z.string(),
});
export type JournalEntry = z.infer<typeof JournalEntry>;
export const JournalReply = z.object({ entries: z.array(JournalEntry) });

/** A limit set through the admin API; `at` (epoch ms) is when the POST was answered: answers recorded before count in the window it ended. */
export interface LimitChange {
  at: number;
  quota: number;
}

export interface RebuiltWindow {
  /** Epoch ms of its first answer. */
  start: number;
  /** When it ended: start + window, or earlier when a limit change cut it. */
  end: number;
  quota: number;
  served: number;
  tooMany: number;
  other: number;
  /** How long after the previous window ended (or a change cut it) this one opened, ms. */
  lagMs: number;
  /** Set when a limit change ended this window early. */
  cut: boolean;
}

const SLOP_MS = 25;

export function rebuildWindows(
  entries: readonly JournalEntry[],
  firstQuota: number,
  windowMs: number,
  changes: readonly LimitChange[] = [],
): RebuiltWindow[] {
  const windows: RebuiltWindow[] = [];
  let quota = firstQuota;
  let nextChange = 0;
  let cur: RebuiltWindow | undefined;
  let lastEnd: number | undefined;
  const close = (end: number, cut: boolean) => {
    if (!cur) return;
    cur.end = Math.min(cur.end, end);
    cur.cut = cut;
    lastEnd = cur.end;
    cur = undefined;
  };
  for (const e of [...entries].sort((a, b) => a.seq - b.seq)) {
    while (nextChange < changes.length && e.at >= (changes[nextChange]?.at ?? Number.POSITIVE_INFINITY)) {
      const change = changes[nextChange++] as LimitChange;
      if (cur && cur.start + windowMs > change.at) close(change.at, true);
      else close(cur ? cur.start + windowMs : change.at, false);
      quota = change.quota;
    }
    const ok = /^2\d\d$/.test(e.status);
    const passed = cur !== undefined && e.at >= cur.start + windowMs;
    const overfills =
      cur !== undefined && ok && cur.served >= cur.quota && e.at >= cur.start + windowMs - SLOP_MS;
    if (!cur || passed || overfills) {
      if (cur) close(cur.start + windowMs, false);
      cur = {
        start: e.at,
        end: e.at + windowMs,
        quota,
        served: 0,
        tooMany: 0,
        other: 0,
        lagMs: lastEnd === undefined ? 0 : Math.max(0, e.at - lastEnd),
        cut: false,
      };
      windows.push(cur);
    }
    if (ok) cur.served++;
    else if (e.status === "429") cur.tooMany++;
    else cur.other++;
  }
  return windows;
}

/**
 * Requests the quota allowed between `from` and `to` at its rate (quota per
 * window, the limit changes applied): what "rate use" divides by.
 */
export function quotaOfTime(
  from: number,
  to: number,
  firstQuota: number,
  windowMs: number,
  changes: readonly LimitChange[] = [],
): number {
  let allowed = 0;
  let t = from;
  let quota = firstQuota;
  for (const c of changes) {
    if (c.at <= t) {
      quota = c.quota;
      continue;
    }
    if (c.at >= to) break;
    allowed += (quota * (c.at - t)) / windowMs;
    t = c.at;
    quota = c.quota;
  }
  return allowed + (quota * (to - t)) / windowMs;
}
