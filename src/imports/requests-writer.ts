import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { rm } from "node:fs/promises";
import { endAndClose } from "./end-and-close.ts";

/**
 * A dry run's record of the requests it would send, one JSON line each:
 * `{"operationId","method","path","body"}`. Private (0o600): bodies hold
 * personal data. With no path the bodies are built and dropped (benchmarks).
 * A run that would send nothing leaves no file (and no stale one from an
 * earlier run at the same path) and reports none.
 */
export class RequestsWriter {
  readonly path: string | null;
  #out: WriteStream | undefined;
  #lines = 0;

  constructor(path: string | null) {
    this.path = path;
    if (path !== null) this.#out = createWriteStream(path, { mode: 0o600 });
  }

  /** `body` is JSON text, or its UTF-8 bytes. */
  async write(operationId: string, method: string, path: string, body: string | Uint8Array): Promise<void> {
    if (this.#out === undefined) return;
    this.#out.write(
      `{"operationId":${JSON.stringify(operationId)},"method":"${method}","path":${JSON.stringify(path)},"body":`,
    );
    this.#out.write(body);
    this.#lines++;
    if (!this.#out.write("}\n")) await once(this.#out, "drain");
  }

  /** The file's path, or null when there is none (no path given, or nothing written). */
  async close(): Promise<string | null> {
    const out = this.#out;
    if (out === undefined) return this.#lines > 0 ? this.path : null;
    this.#out = undefined;
    await endAndClose(out, out);
    if (this.#lines > 0 || this.path === null) return this.path;
    await rm(this.path, { force: true });
    return null;
  }
}
