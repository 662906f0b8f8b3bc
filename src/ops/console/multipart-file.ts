import { open } from "node:fs/promises";
import type { Readable } from "node:stream";

/** What came in with the file field: its size and the name the browser gave it. */
export interface ReceivedFile {
  bytes: number;
  /** The sender's file name (folders stripped), for people only: never a path on this machine. */
  fileName: string | undefined;
}

export type MultipartOutcome =
  | { kind: "file"; file: ReceivedFile }
  /** No part of that name: nothing was written. */
  | { kind: "missing" }
  /** The field went past maxBytes: what was written is left for the caller to remove. */
  | { kind: "too-large" }
  /** The uploads folder's quota would be passed: what was written is left for the caller to remove. */
  | { kind: "over-quota" }
  /** A second file came in the same body (in the field or another): what was written is left for the caller to remove. */
  | { kind: "second-file" }
  | { kind: "malformed"; reason: string };

/** The boundary of a `multipart/form-data` content type, or undefined when it is not one. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\s*(;|$)/i.test(contentType)) return undefined;
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;]{1,70}))/i.exec(contentType);
  return m?.[1] ?? m?.[2];
}

const HEADER_END = Buffer.from("\r\n\r\n");
const MAX_HEADER_BYTES = 16 * 1024;

function dispositionOf(headers: string): { name?: string; fileName?: string } {
  const line = headers.split("\r\n").find((l) => /^content-disposition\s*:/i.test(l)) ?? "";
  const name = /;\s*name="([^"]*)"/i.exec(line)?.[1];
  const fileName = /;\s*filename="([^"]*)"/i.exec(line)?.[1];
  return {
    ...(name !== undefined ? { name } : {}),
    ...(fileName !== undefined ? { fileName } : {}),
  };
}

/** A browser may send C:\fakepath\x.csv: the last segment, without control characters, and not too long. */
function cleanFileName(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const last = name.split(/[/\\]/).pop() ?? "";
  const base = [...last]
    .filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) !== 0x7f)
    .join("")
    .slice(0, 200);
  return base || undefined;
}

/**
 * Streams the part named `field` of a `multipart/form-data` body into `dest`
 * (created owner-only, 0600), never holding more than a chunk in memory, and
 * reads the rest of the body to its end so the answer reaches the sender.
 * Other fields are read and dropped; a second file (a second part of that
 * name, or any other part carrying a file name) is refused. A field larger
 * than `maxBytes`, or bytes `take` refuses (the uploads folder's quota), stop
 * the writing at once.
 */
export async function receiveMultipartFile(
  body: Readable,
  boundary: string,
  dest: string,
  options: { field: string; maxBytes: number; take?: (bytes: number) => boolean },
): Promise<MultipartOutcome> {
  // The body's first boundary has no CRLF before it: one is put there, so every boundary reads alike.
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  let buf: Buffer = Buffer.from("\r\n");
  let state: "preamble" | "after-delimiter" | "headers" | "part" | "done" = "preamble";
  let writing = false;
  let found: ReceivedFile | undefined;
  /** Why the writing stopped before the end, the first reason found. */
  let refused: "too-large" | "over-quota" | "second-file" | undefined;
  let files = 0;
  let malformed: string | undefined;
  const out = await open(dest, "wx", 0o600);
  try {
    const emit = async (data: Buffer) => {
      if (!writing || data.length === 0 || refused) return;
      const file = found as ReceivedFile;
      file.bytes += data.length;
      if (file.bytes > options.maxBytes) {
        refused = "too-large";
        return;
      }
      if (options.take && !options.take(data.length)) {
        refused = "over-quota";
        return;
      }
      await out.write(data);
    };
    for await (const chunk of body as AsyncIterable<Buffer>) {
      if (state === "done" || malformed) continue;
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        if (state === "preamble" || state === "part") {
          const at = buf.indexOf(delimiter);
          if (at < 0) {
            const safe = buf.length - (delimiter.length - 1);
            if (safe > 0) {
              if (state === "part") await emit(buf.subarray(0, safe));
              buf = buf.subarray(safe);
            }
            break;
          }
          if (state === "part") await emit(buf.subarray(0, at));
          if (writing) writing = false;
          buf = buf.subarray(at + delimiter.length);
          state = "after-delimiter";
        } else if (state === "after-delimiter") {
          if (buf.length < 2) break;
          const next = buf.subarray(0, 2).toString("latin1");
          if (next === "--") {
            state = "done";
            break;
          }
          if (next !== "\r\n") {
            malformed = "a boundary is not followed by a line end";
            break;
          }
          buf = buf.subarray(2);
          state = "headers";
        } else if (state === "headers") {
          const end = buf.indexOf(HEADER_END);
          if (end < 0) {
            if (buf.length > MAX_HEADER_BYTES) malformed = "a part's headers are too long";
            break;
          }
          const { name, fileName } = dispositionOf(buf.subarray(0, end).toString("utf8"));
          buf = buf.subarray(end + HEADER_END.length);
          if (name === options.field || fileName !== undefined) files++;
          if (files > 1) refused ??= "second-file";
          if (name === options.field && !found) {
            const clean = cleanFileName(fileName);
            found = { bytes: 0, fileName: clean };
            writing = true;
          }
          state = "part";
        } else break;
      }
    }
  } finally {
    await out.close();
  }
  if (refused) return { kind: refused };
  if (malformed) return { kind: "malformed", reason: malformed };
  if (state !== "done") return { kind: "malformed", reason: "the body ends before its closing boundary" };
  return found ? { kind: "file", file: found } : { kind: "missing" };
}
