import { randomUUID } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";

export interface SpooledInput {
  /** A regular file holding the input. */
  file: string;
  /** True when the input was copied here (stdin, a pipe); removed by `cleanup`. */
  spooled: boolean;
  cleanup(): Promise<void>;
}

/**
 * An import reads its file more than once (its hash, then its rows, then again for late rejects),
 * so input that can be read only once — `-` for standard input, a pipe such
 * as `<(cat f)`, /dev/stdin — is first copied to a private file in the data
 * folder (0600 in a 0700 folder: it holds people's data) and removed after.
 */
export async function spoolInput(
  arg: string,
  dataDir: string,
  stdin: NodeJS.ReadableStream = process.stdin,
): Promise<SpooledInput> {
  if (arg !== "-") {
    const file = path.resolve(arg);
    const s = await stat(file).catch(() => undefined);
    if (!s || s.isFile()) return { file, spooled: false, cleanup: async () => {} };
  }
  const dir = path.resolve(dataDir, "stdin");
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const file = path.join(dir, `${randomUUID()}.csv`);
  const source = arg === "-" ? stdin : createReadStream(path.resolve(arg));
  try {
    await pipeline(source, createWriteStream(file, { mode: 0o600, flags: "wx" }));
  } catch (err) {
    await rm(file, { force: true });
    throw err;
  }
  return { file, spooled: true, cleanup: () => rm(file, { force: true }) };
}
