/**
 * Keeps one commit in flight while the stream fetches and converts the next
 * pages: the warehouse and the service (or the CPU) work at the same time,
 * and commits still apply strictly in order.
 */
export class CommitPipeline {
  #pending: Promise<unknown> | undefined;

  /**
   * Queues `commit` behind the one before and resolves once that one is done
   * (this one then runs without being waited for). Queued at once, so two
   * pushes that overlap — the stream's own and one made during a budget
   * wait — commit in the order they were pushed, and drain() sees both.
   */
  async push(commit: () => Promise<unknown>): Promise<void> {
    const before = this.#pending;
    const p = (async () => {
      await before;
      return commit();
    })();
    // Seen by drain() or the next push(); this only keeps Node from calling it unhandled meanwhile.
    p.catch(() => undefined);
    this.#pending = p;
    this.#busy = true;
    p.finally(() => {
      if (this.#pending === p) this.#busy = false;
    }).catch(() => undefined);
    await before;
  }

  #busy = false;

  /** A commit pushed is not yet done. */
  get busy(): boolean {
    return this.#busy;
  }

  /** Resolves once every commit pushed so far has settled, whatever its outcome. */
  idle(): Promise<void> {
    return (this.#pending ?? Promise.resolve()).then(
      () => undefined,
      () => undefined,
    );
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
