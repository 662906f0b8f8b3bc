/**
 * What the import's per-row steps return (a spill append, a rejects write, a
 * row taken while the file is read and mapped): `undefined` when the step finished at once,
 * which is nearly always, or a promise when the caller must wait — a buffer
 * went out to disk. Callers write `const wait = step(); if (wait) await wait;`.
 *
 * Why not always a promise: `await` on every one of a million rows costs a
 * microtask turn each, and a per-row promise is garbage the GC must collect;
 * together they were a visible share of reading a file. The convention is
 * defined here once and the type names it wherever it is used.
 */
export type MaybePromise = Promise<void> | undefined;
