import { createHash, randomUUID } from "node:crypto";
import type { RuntimeConfig } from "../config/index.ts";
import { ConfigError } from "../errors/index.ts";
import type { RedisConnection } from "./redis-connection.ts";

/**
 * What makes a fleet one: the workers under one Redis prefix share one queue,
 * one rate budget and one ledger, so they must talk to one service with one
 * token. Each live worker keeps an entry in a sorted set (scored by when it
 * was last seen) naming its service and a fingerprint of its token — never
 * the token itself.
 *
 * The epoch is a random id kept under the prefix without an expiry. Only a
 * Redis that lost its data (restarted without persistence, flushed, or
 * evicting keys) loses it, so a worker that finds it gone or changed knows
 * the queues, schedules and ledgers it relied on are gone too.
 */
export interface FleetKeys {
  epoch: string;
  members: string;
}

/** A worker's entry is dropped when it has not been seen for this long (a killed worker's, say). */
export const MEMBER_STALE_MS = 60_000;

export function fleetKeys(prefix: string): FleetKeys {
  return { epoch: `${prefix}:fleet:epoch`, members: `${prefix}:fleet:members` };
}

/** The part of a member that must agree across the fleet: service and token fingerprint. */
export function fleetFingerprint(config: RuntimeConfig): { service: string; token: string } {
  const service = config.service.baseUrl.replace(/\/+$/, "");
  const token = createHash("sha256")
    .update(`recruit-sync fleet token\n${config.service.token ?? ""}`)
    .digest("hex")
    .slice(0, 12);
  return { service, token };
}

/** `token|service|worker`: the service may hold "|" but the fingerprint and worker id do not. */
function memberOf(fp: { service: string; token: string }, worker: string): string {
  return `${fp.token}|${fp.service}|${worker}`;
}

function parseMember(member: string): { token: string; service: string; worker: string } {
  const first = member.indexOf("|");
  const last = member.lastIndexOf("|");
  return {
    token: member.slice(0, first),
    service: member.slice(first + 1, last),
    worker: member.slice(last + 1),
  };
}

// KEYS: epoch, members. ARGV: now, staleMs, our agreeing part ("token|service|"), member, new epoch.
// Atomic so two workers with different settings that start at once cannot both join.
const JOIN = `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
local ours = ARGV[3]
for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
  if string.sub(m, 1, string.len(ours)) ~= ours then return {'mismatch', m} end
end
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[4])
local epoch = redis.call('GET', KEYS[1])
if epoch then return {'joined', epoch} end
redis.call('SET', KEYS[1], ARGV[5])
return {'new', ARGV[5]}
`;

// KEYS: epoch, members. ARGV: now, staleMs, member, known epoch, new epoch.
const BEAT = `
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', tonumber(ARGV[1]) - tonumber(ARGV[2]))
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[3])
local epoch = redis.call('GET', KEYS[1])
if epoch == ARGV[4] then return {'same', epoch} end
if epoch then return {'lost', epoch} end
redis.call('SET', KEYS[1], ARGV[5])
return {'lost', ARGV[5]}
`;

export interface FleetMembership {
  /** The epoch this worker knows. */
  readonly epoch: string;
  /** True when this worker found no epoch: a Redis that was empty (new, or lost its data while no worker ran). */
  readonly founded: boolean;
  /**
   * Says this worker is alive and checks the epoch. "lost": Redis lost its
   * data since the last beat (the epoch is then the new one, shared by
   * whichever worker noticed first).
   */
  beat(): Promise<"same" | "lost">;
  leave(): Promise<void>;
}

/**
 * Joins the fleet under the configured prefix, or refuses (a ConfigError, one
 * line) when a live worker there uses another service or another token.
 */
export async function joinFleet(
  redis: RedisConnection,
  config: RuntimeConfig,
  worker: string,
): Promise<FleetMembership> {
  const keys = fleetKeys(config.redis.prefix);
  const fp = fleetFingerprint(config);
  const member = memberOf(fp, worker);
  const [outcome, value] = (await redis.eval(
    JOIN,
    2,
    keys.epoch,
    keys.members,
    Date.now(),
    MEMBER_STALE_MS,
    `${fp.token}|${fp.service}|`,
    member,
    randomUUID(),
  )) as [string, string];
  if (outcome === "mismatch") {
    const other = parseMember(value);
    const what =
      other.service !== fp.service
        ? `the service ${other.service}, this one ${fp.service}`
        : `another API token (fingerprint ${other.token}, this one ${fp.token})`;
    throw new ConfigError(
      `another worker under Redis prefix ${config.redis.prefix} uses ${what}: workers sharing a prefix share its queues, rate budget and ledger, so they must share service and token; give this one its own redis.prefix, or stop the others first (a stopped worker's entry lapses after ${MEMBER_STALE_MS / 1000} s)`,
      [{ path: "service", message: "differs from the running fleet's" }],
    );
  }
  let epoch = value;
  return {
    get epoch() {
      return epoch;
    },
    founded: outcome === "new",
    async beat() {
      const [state, now] = (await redis.eval(
        BEAT,
        2,
        keys.epoch,
        keys.members,
        Date.now(),
        MEMBER_STALE_MS,
        member,
        epoch,
        randomUUID(),
      )) as [string, string];
      epoch = now;
      return state === "same" ? "same" : "lost";
    },
    async leave() {
      await redis.zrem(keys.members, member);
    },
  };
}

/**
 * The epoch now, made if there is none, for a caller that follows a job and
 * must later tell a job removed by someone from a job lost with Redis's data.
 */
export async function currentEpoch(redis: RedisConnection, prefix: string): Promise<string> {
  const key = fleetKeys(prefix).epoch;
  await redis.set(key, randomUUID(), "NX");
  return (await redis.get(key)) ?? "";
}
