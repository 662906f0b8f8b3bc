import pLimit, { type LimitFunction } from "p-limit";

/**
 * The run's stream slots: at most `concurrency` streams page at once, in the
 * order they asked. Until the run has an answer from the service, or a
 * stream has ended, one stream at a time: a refused token or a service out
 * of reach is met by one request, not by one per stream.
 */
export class StreamSlots {
  readonly #limit: LimitFunction = pLimit(1);
  readonly #concurrency: number;

  constructor(concurrency: number) {
    this.#concurrency = Math.max(1, Math.floor(concurrency));
  }

  /** Runs `work` in a slot; the slot is released only once `work` has settled. */
  run<T>(work: () => Promise<T>): Promise<T> {
    return this.#limit(async () => {
      try {
        return await work();
      } finally {
        this.open();
      }
    });
  }

  /** The service answered, or a stream ended: every slot may be used from now on. */
  open(): void {
    if (this.#limit.concurrency !== this.#concurrency) this.#limit.concurrency = this.#concurrency;
  }
}
