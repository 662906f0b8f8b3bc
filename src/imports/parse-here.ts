import { isUtf8 } from "node:buffer";
import { createReadStream } from "node:fs";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { type Options as ParseOptions, parse } from "csv-parse";
import { fileError } from "./csv-file-error.ts";
import type { DetectedEncoding } from "./decode.ts";
import type { RecordChunk } from "./record-chunk.ts";
import { createTextDecoder, guardUtf8 } from "./text-streams.ts";

const CHUNK_ROWS = 1000;

function arrayChunk(firstRow: number, bytesRead: number, rows: string[][]): RecordChunk {
  return { firstRow, length: rows.length, bytesRead, cells: (i) => rows[i] as string[] };
}

/**
 * Parses a file on the calling thread, in chunks of a thousand records: for
 * a file too small for the parse thread's start to pay (read-records.ts).
 * The bytes after the byte-order mark are decoded as `detected` says.
 */
export async function* parseHere(
  file: string,
  detected: DetectedEncoding,
  options: ParseOptions,
  signal?: AbortSignal,
): AsyncGenerator<RecordChunk> {
  const input = createReadStream(file, { start: detected.bomLength, highWaterMark: 256 * 1024 });
  // UTF-8 needs no decoder: csv-parse reads its bytes natively.
  const decoder =
    detected.encoding === "utf-8"
      ? undefined
      : createTextDecoder((await import("iconv-lite")).default, Transform, detected.encoding);
  const streams: (Readable | NodeJS.ReadWriteStream)[] = decoder
    ? [input, decoder]
    : [Readable.from(guardUtf8(input, isUtf8), { objectMode: false })];
  let row = 0;
  let rows: string[][] = [];
  const chunker = new Transform({
    objectMode: true,
    transform(cells: string[], _enc, done) {
      rows.push(cells);
      if (rows.length >= CHUNK_ROWS) {
        this.push(arrayChunk(row + 1, detected.bomLength + input.bytesRead, rows));
        row += rows.length;
        rows = [];
      }
      done();
    },
    flush(done) {
      if (rows.length) this.push(arrayChunk(row + 1, detected.bomLength + input.bytesRead, rows));
      row += rows.length;
      done();
    },
  });
  streams.push(parse(options), chunker);
  let failure: unknown;
  const done = pipeline(streams as unknown as [Readable, NodeJS.ReadWriteStream], { signal }).catch((err) => {
    failure = err;
  });
  try {
    for await (const chunk of chunker as AsyncIterable<RecordChunk>) yield chunk;
  } catch (err) {
    failure ??= err;
  }
  await done;
  if (failure !== undefined) throw fileError(failure, row + rows.length, signal);
}
