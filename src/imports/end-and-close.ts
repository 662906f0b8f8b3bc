import { once } from "node:events";
import type { WriteStream } from "node:fs";

/** Ends `head` (the file itself, or the writer piped into it) and resolves once `file` is closed on disk. */
export async function endAndClose(head: { end(): unknown }, file: WriteStream): Promise<void> {
  if (file.closed) return;
  const closed = once(file, "close");
  head.end();
  await closed;
}
