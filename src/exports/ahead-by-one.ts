/**
 * Asks `source` for its next item as soon as the caller has the current one:
 * with a page iterator, the next page is on the wire while the caller
 * converts and commits this one, so network and sink work overlap.
 *
 * Nothing is committed ahead: a page fetched early is only held in memory,
 * and checkpoints still advance only when the caller commits. A caller that
 * stops early (last page, failure, abort) waits for the one fetch in flight
 * to settle, so no request outlives the run; that fetch's failure, if any,
 * is dropped — the caller never asked for its page.
 */
export async function* aheadByOne<T>(
  source: AsyncIterable<T>,
  onFailure?: (err: unknown) => void,
): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  // `onFailure` hears of a failed fetch at once, before the caller asks for its page (a run may stop on it).
  const pull = () => {
    const p = it.next();
    p.catch((err: unknown) => onFailure?.(err));
    return p;
  };
  let next: Promise<IteratorResult<T>> | undefined = pull();
  try {
    for (;;) {
      const current = await next;
      next = undefined;
      if (current.done) return;
      // Seen by the await above when the caller asks for it; pull's catch keeps Node from calling it unhandled meanwhile.
      next = pull();
      yield current.value;
    }
  } finally {
    if (next !== undefined) {
      await next.catch(() => undefined);
      await it.return?.(undefined)?.catch(() => undefined);
    }
  }
}
