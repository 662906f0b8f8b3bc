import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { pipeline } from "node:stream/promises";

/** SHA-256 of a file's bytes, streamed; `onBytes` hears the bytes hashed so far after each read. */
export async function hashFile(
  file: string,
  signal?: AbortSignal,
  onBytes?: (bytesRead: number) => void,
): Promise<string> {
  const hash = createHash("sha256");
  const input = createReadStream(file, { highWaterMark: 1 << 20 });
  if (onBytes) input.on("data", () => onBytes(input.bytesRead));
  await pipeline(input, hash, { signal });
  return hash.digest("hex");
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

/** SHA-256 of a value's JSON with keys sorted, so key order in the YAML does not matter. */
export function hashValue(value: unknown): string {
  return createHash("sha256")
    .update(JSON.stringify(canonical(value)))
    .digest("hex");
}
