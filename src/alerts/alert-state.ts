import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import { z } from "zod";
import type { AlertSeverity } from "../config/index.ts";
import type { AlertEvent, AlertRule } from "./alert-event.ts";
import type { AlertKeys } from "./alert-keys.ts";

/** What a rule found for one subject at one evaluation. */
export interface Observation {
  rule: AlertRule;
  subject: string;
  firing: boolean;
  severity: AlertSeverity;
  /** One line for people, said of the state found (firing or cleared). */
  title: string;
  facts: AlertEvent["facts"];
}

/** A rule's state for one subject, as Redis keeps it between evaluations and processes. */
export const AlertState = z.object({
  state: z.enum(["firing", "ok"]),
  /** Changes so far; the next change is seq + 1. */
  seq: z.number().int().min(0),
  /** When the state began (epoch ms). */
  since: z.number(),
  severity: z.string().optional(),
  title: z.string().optional(),
  /** The event of the last change. */
  id: z.string().optional(),
});
export type AlertState = z.infer<typeof AlertState>;

/**
 * The decision and its outbox entry in one step, so a crash after it loses
 * nothing (the outbox is handed to the alerts queue by whoever evaluates
 * next) and two processes deciding at once decide once: only the first sees
 * the state change. A subject first seen well is recorded without an alert.
 * Returns the change's number, 0 when nothing changed.
 */
// KEYS: state, outbox. ARGV: field, new state (firing|ok), now, event JSON, event id base.
const TRANSITION = `
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local seq = 0
local was = 'ok'
if cur then
  local c = cjson.decode(cur)
  seq = tonumber(c.seq) or 0
  was = c.state
  if was == ARGV[2] then return 0 end
end
local now = tonumber(ARGV[3])
if ARGV[2] == 'ok' and not cur then
  redis.call('HSET', KEYS[1], ARGV[1], cjson.encode({state = 'ok', seq = 0, since = now}))
  return 0
end
seq = seq + 1
local event = cjson.decode(ARGV[4])
event.seq = seq
event.id = ARGV[5] .. '-' .. seq
if ARGV[2] == 'firing' then event.state = 'firing' else event.state = 'resolved' end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode({state = ARGV[2], seq = seq, since = now,
  severity = event.severity, title = event.title, id = event.id}))
redis.call('HSET', KEYS[2], event.id, cjson.encode(event))
return seq
`;

/** The state hash's field of a rule and subject. */
export function stateField(rule: AlertRule, subject: string): string {
  return `${rule}|${subject}`;
}

/** `alert-<rule>-<12 hex of the subject>`: BullMQ job ids take no ':' and the subject may hold anything. */
function eventIdBase(rule: AlertRule, subject: string): string {
  const hash = createHash("sha256").update(subject).digest("hex").slice(0, 12);
  return `alert-${rule}-${hash}`;
}

/**
 * Records what a rule found; when that is a change (firing after ok, ok
 * after firing), the alert is decided and put in the outbox atomically.
 * Returns the change's number (its `seq`), 0 when nothing changed.
 */
export async function decide(
  redis: Redis,
  keys: AlertKeys,
  source: string,
  observation: Observation,
  now = Date.now(),
): Promise<number> {
  // Cut to what AlertEvent takes, so a long job name cannot make an alert that no channel is sent.
  const facts = Object.fromEntries(
    Object.entries(observation.facts).map(([k, v]) => [k, typeof v === "string" ? v.slice(0, 200) : v]),
  );
  const event = {
    rule: observation.rule,
    subject: observation.subject.slice(0, 200),
    severity: observation.severity,
    title: observation.title.slice(0, 300),
    facts,
    at: new Date(now).toISOString(),
    source,
  };
  const seq = await redis.eval(
    TRANSITION,
    2,
    keys.state,
    keys.outbox,
    stateField(observation.rule, observation.subject),
    observation.firing ? "firing" : "ok",
    now,
    JSON.stringify(event),
    eventIdBase(observation.rule, observation.subject),
  );
  return Number(seq);
}

/** Every rule's state for every subject, by `rule|subject`. */
export async function readAlertStates(
  redis: Redis,
  keys: AlertKeys,
): Promise<Array<AlertState & { rule: string; subject: string }>> {
  const all = await redis.hgetall(keys.state);
  const out: Array<AlertState & { rule: string; subject: string }> = [];
  for (const [field, text] of Object.entries(all)) {
    const bar = field.indexOf("|");
    const parsed = AlertState.safeParse(safeJson(text));
    if (bar < 0 || !parsed.success) continue;
    out.push({ ...parsed.data, rule: field.slice(0, bar), subject: field.slice(bar + 1) });
  }
  return out.sort((a, b) => a.rule.localeCompare(b.rule) || a.subject.localeCompare(b.subject));
}

export function safeJson(text: string | null | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
