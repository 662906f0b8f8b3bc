/**
 * A wait on the rate budget this long or longer is worth a commit: the
 * streams' requests cannot go before it ends, and a commit of a few thousand
 * rows takes a few hundred milliseconds. Shorter waits are the governor's
 * polls between two answers.
 */
export const COMMIT_DURING_WAITS_OF_MS = 500;

/**
 * Tells a run when its requests wait on the shared rate budget (the service
 * client's onBudgetWait). The streams spend that wait committing the rows
 * they gathered since their last checkpoint instead of holding them until
 * the next one: the warehouse is current sooner, a killed run has less to
 * read again, and the last window leaves only its own rows to commit.
 */
export class BudgetWaits {
  readonly #listeners = new Set<() => void>();

  /** Hand this to the service client as onBudgetWait: it never throws, since a throw there fails the request. */
  readonly heard = (ms: number): void => {
    if (ms < COMMIT_DURING_WAITS_OF_MS) return;
    for (const listener of this.#listeners) {
      try {
        listener();
      } catch {
        // A stream that cannot commit now commits at its next checkpoint.
      }
    }
  };

  /** Calls `listener` at every long wait until the returned function is called. */
  listen(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
