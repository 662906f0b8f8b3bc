import { once } from "node:events";
import { createWriteStream, type WriteStream } from "node:fs";
import { endAndClose } from "./end-and-close.ts";

/**
 * A dry run's record of the requests it would send, one JSON line each:
 * `{"operationId","method","path","body"}`. Private (0o600): bodies hold
 * personal data. With no path the bodies are built and dropped (benchmarks).
 */
export class RequestsWriter {
  readonly path: string | null;
  #out: WriteStream | undefined;

  constructor(path: string | null) {
    this.path = path;
    if (path !== null) this.#out = createWriteStream(path, { mode: 0o600 });
  }

  async write(operationId: string, method: string, path: string, body: string): Promise<void> {
    if (this.#out === undefined) return;
    const line = `{"operationId":${JSON.stringify(operationId)},"method":"${method}","path":${JSON.stringify(path)},"body":${body}}\n`;
    if (!this.#out.write(line)) await once(this.#out, "drain");
  }

  async close(): Promise<string | null> {
    const out = this.#out;
    if (out === undefined) return this.path;
    this.#out = undefined;
    await endAndClose(out, out);
    return this.path;
  }
}
