/**
 * Slows down guessing the ops password without ever holding back the right
 * one. Wrong tries are counted per source address AND user: behind a TLS
 * proxy every person shares one address, and a guesser there must not lock
 * the others out. Every password is checked; the right one is answered at
 * once whatever the count. After FREE_TRIES wrong tries, each further wrong
 * one is answered 429 only after a hold (FIRST_HOLD_MS, doubling with each
 * wrong try, up to MAX_HOLD_MS): with the right password always answered at
 * once, holding the wrong answer is the only thing that slows a guesser, who
 * otherwise learns from each instant 429 that the guess was wrong.
 *
 * A right password does not reset the count: behind a shared address the
 * right user's own requests would otherwise wipe a guesser's count every few
 * seconds. The count is forgotten FORGET_AFTER_MS after the last wrong try.
 */
export interface BrakeTimings {
  freeTries: number;
  firstHoldMs: number;
  maxHoldMs: number;
  forgetAfterMs: number;
}

export const DEFAULT_BRAKE_TIMINGS: BrakeTimings = {
  freeTries: 5,
  firstHoldMs: 1000,
  maxHoldMs: 60_000,
  forgetAfterMs: 15 * 60_000,
};

/** Address and user pairs remembered at most; the oldest are forgotten first, so memory stays bounded. */
const MAX_KEYS = 10_000;

interface Strikes {
  wrong: number;
  lastWrongAt: number;
}

export interface WrongPasswordBrake {
  /**
   * Counts a wrong try of `user` from `address` and says how long its answer
   * is held: 0 for the free tries (answered 401 at once), else the hold
   * before its 429.
   */
  wrong(address: string, user: string, now?: number): number;
  /** Wrong tries counted for this pair, 0 once forgotten. */
  count(address: string, user: string, now?: number): number;
}

export function wrongPasswordBrake(timings: BrakeTimings = DEFAULT_BRAKE_TIMINGS): WrongPasswordBrake {
  const strikes = new Map<string, Strikes>();
  // NUL cannot be in an address, and basic auth's user ends at the first colon, so the key is unambiguous.
  const keyOf = (address: string, user: string) => `${address}\u0000${user}`;
  const current = (key: string, now: number): Strikes | undefined => {
    const s = strikes.get(key);
    if (s && now - s.lastWrongAt > timings.forgetAfterMs) {
      strikes.delete(key);
      return undefined;
    }
    return s;
  };
  return {
    wrong(address, user, now = Date.now()) {
      const key = keyOf(address, user);
      const s = current(key, now) ?? { wrong: 0, lastWrongAt: now };
      s.wrong++;
      s.lastWrongAt = now;
      // Re-inserted so the Map's order is by last wrong try.
      strikes.delete(key);
      strikes.set(key, s);
      if (strikes.size > MAX_KEYS) strikes.delete(strikes.keys().next().value as string);
      const over = s.wrong - timings.freeTries;
      if (over <= 0) return 0;
      return Math.min(timings.maxHoldMs, timings.firstHoldMs * 2 ** Math.min(over - 1, 30));
    },
    count(address, user, now = Date.now()) {
      return current(keyOf(address, user), now)?.wrong ?? 0;
    },
  };
}
