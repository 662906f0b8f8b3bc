/**
 * Slows down guessing the ops password: after FREE_TRIES wrong tries in a row
 * from one address, that address is answered 429 without a check for a
 * while, the wait doubling with each further wrong try up to MAX_WAIT_MS. A
 * right password resets the address. Answering 429 rather than sleeping keeps
 * no connection open for an attacker.
 */
const FREE_TRIES = 5;
const FIRST_WAIT_MS = 1000;
const MAX_WAIT_MS = 60_000;
/** Addresses remembered at most; the oldest are forgotten first, so memory stays bounded. */
const MAX_ADDRESSES = 10_000;

interface Strikes {
  wrong: number;
  blockedUntil: number;
}

export interface WrongPasswordBrake {
  /** Milliseconds this address must still wait, 0 when it may try. */
  waitOf(address: string, now?: number): number;
  wrong(address: string, now?: number): void;
  right(address: string): void;
}

export function wrongPasswordBrake(): WrongPasswordBrake {
  const strikes = new Map<string, Strikes>();
  return {
    waitOf(address, now = Date.now()) {
      const s = strikes.get(address);
      return s ? Math.max(0, s.blockedUntil - now) : 0;
    },
    wrong(address, now = Date.now()) {
      const s = strikes.get(address) ?? { wrong: 0, blockedUntil: 0 };
      s.wrong++;
      if (s.wrong >= FREE_TRIES) {
        s.blockedUntil = now + Math.min(MAX_WAIT_MS, FIRST_WAIT_MS * 2 ** (s.wrong - FREE_TRIES));
      }
      // Re-inserted so the Map's order is by last wrong try.
      strikes.delete(address);
      strikes.set(address, s);
      if (strikes.size > MAX_ADDRESSES) strikes.delete(strikes.keys().next().value as string);
    },
    right(address) {
      strikes.delete(address);
    },
  };
}
