/**
 * The emulator's notion of "now". It runs with the machine's time plus an
 * offset, so tests can move it forward (incentive expiry, NUMBER_OF_DAYS_AGO)
 * without waiting. Rate-limit windows use real time, not this clock: a client
 * throttles against the wall clock.
 */
export class EmulatorClock {
  #offsetMs = 0;

  now(): number {
    return Date.now() + this.#offsetMs;
  }
  nowIso(): string {
    return new Date(this.now()).toISOString();
  }
  set(epochMs: number): void {
    this.#offsetMs = epochMs - Date.now();
  }
  advance(ms: number): void {
    this.#offsetMs += ms;
  }
  get offsetMs(): number {
    return this.#offsetMs;
  }
  set offsetMs(ms: number) {
    this.#offsetMs = ms;
  }
}
