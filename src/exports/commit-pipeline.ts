/**
 * Keeps one commit in flight while the stream fetches and converts the next
 * pages: the warehouse and the service (or the CPU) work at the same time,
 * and commits still apply strictly in order.
 */
export class CommitPipeline {
  #pending: Promise<unknown> | undefined;

  /** Waits for the commit before, then starts this one without waiting for it. */
  async push(commit: () => Promise<unknown>): Promise<void> {
    await this.#pending;
    const p = commit();
    // Seen by drain() or the next push(); this only keeps Node from calling it unhandled meanwhile.
    p.catch(() => undefined);
    this.#pending = p;
  }

  /** Waits for the last commit and rethrows its failure. */
  async drain(): Promise<void> {
    const p = this.#pending;
    this.#pending = undefined;
    await p;
  }

  /** After a failure elsewhere: lets the last commit finish, whatever its outcome. */
  async settle(): Promise<void> {
    await this.#pending?.catch(() => undefined);
    this.#pending = undefined;
  }
}
