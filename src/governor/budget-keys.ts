import { createHash } from "node:crypto";

/** The Redis keys of one budget, in the order the scripts take them as KEYS. */
export interface BudgetKeys {
  state: string;
  inFlight: string;
  waitingInteractive: string;
  waitingBackground: string;
}

/** All of a budget's keys, in the KEYS order every script expects. */
export function keyList(k: BudgetKeys): [string, string, string, string] {
  return [k.state, k.inFlight, k.waitingInteractive, k.waitingBackground];
}

/**
 * The keys of the budget of `token` at `service`. Only a hash of the two
 * reaches Redis. The hash sits in braces, a Redis Cluster hash tag, so every
 * key of the budget lands in one slot and a script may touch them all; when
 * the prefix carries its own tag (`{recruit-sync}`), Redis hashes the first
 * tag, which is the prefix's — one slot all the same.
 */
export function budgetKeys(prefix: string, service: string, token: string): BudgetKeys {
  const hash = createHash("sha256")
    .update(`${service.replace(/\/+$/, "")}\n${token}`)
    .digest("hex")
    .slice(0, 16);
  const base = `${prefix}:governor:{${hash}}`;
  return {
    state: `${base}:state`,
    inFlight: `${base}:in-flight`,
    waitingInteractive: `${base}:waiting:interactive`,
    waitingBackground: `${base}:waiting:background`,
  };
}
