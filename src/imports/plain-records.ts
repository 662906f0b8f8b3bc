/**
 * A fast path in front of csv-parse for UTF-8 files.
 *
 * csv-parse costs ~10 µs a row (byte-wise state machine, a buffer per field),
 * more than everything else the import does to a row. Most records of a CRM
 * export are plain: every field is either unquoted and free of quotes, or
 * quoted with `""` escapes and closed right before a delimiter or a line end.
 * Such records split with a tight char loop at a fraction of the cost.
 *
 * `scanPlainRecords` takes records while they are plain and stops at the
 * first one it cannot vouch for (a quote inside an unquoted field, text after
 * a closing quote, a quote that does not close, a record near
 * `maxRecordBytes`). `readPlainThenParse` hands everything from that record
 * on to csv-parse, so every odd case keeps csv-parse's behaviour: relaxed
 * quotes, errors, their line numbers.
 *
 * Both run only in the parse worker (parse-worker.ts), which reads files of
 * WORKER_MIN_BYTES and more (csv-format.ts); a smaller file is read on the
 * main thread by csv-parse alone. Their modules come in as arguments.
 */

/** Why a scan stopped. */
export interface ScanResult {
  /** Position after the last record taken. */
  pos: number;
  /** 0: needs more text; 1: `maxRows` rows taken; 2: the record at `pos` is not plain. */
  status: 0 | 1 | 2;
  /** Records taken that ended in "\r\n", added up across calls (csv-parse counts those as one line). */
  crlf: number;
}

/**
 * Splits `text` from `pos` into records, pushing each as an array of cells to
 * `rows`, as csv-parse would with `relax_quotes`, `relax_column_count`,
 * `skip_empty_lines: false` and the record delimiters `\r\n`, `\n`, `\r`. A
 * record that may continue past the end of `text` is left for the next call
 * unless `final`.
 */
export function scanPlainRecords(
  text: string,
  start: number,
  delimiter: number,
  final: boolean,
  maxRecordBytes: number,
  rows: string[][],
  maxRows: number,
  out: ScanResult,
): void {
  const n = text.length;
  // A record of c chars is at most 3c bytes of UTF-8: below that, csv-parse's size limit cannot trip.
  const maxChars = Math.floor(maxRecordBytes / 3);
  const record: RecordEnd = { verdict: 0, end: 0, crlf: 0 };
  let pos = start;
  for (;;) {
    if (pos >= n || rows.length >= maxRows) {
      out.pos = pos;
      out.status = pos >= n ? 0 : 1;
      return;
    }
    const cells: string[] = [];
    scanRecord(text, pos, delimiter, final, cells, record);
    let verdict = record.verdict;
    if (verdict === 0 && record.end - pos > maxChars) verdict = 2;
    if (verdict === 1 && n - pos > maxChars) verdict = 2;
    if (verdict !== 0) {
      out.pos = pos;
      out.status = verdict === 1 ? 0 : 2;
      return;
    }
    rows.push(cells);
    out.crlf += record.crlf;
    pos = record.end;
  }
}

/** How one record's scan ended: 0 taken, ending at `end`; 1 it needs more text; 2 it is not plain. */
interface RecordEnd {
  verdict: 0 | 1 | 2;
  end: number;
  /** 1 when it ended in "\r\n". */
  crlf: number;
}

/** Scans the record at `pos` into `cells`, field by field; `out` says how it ended. */
function scanRecord(
  text: string,
  pos: number,
  delimiter: number,
  final: boolean,
  cells: string[],
  out: RecordEnd,
): void {
  const n = text.length;
  let p = pos;
  out.crlf = 0;
  out.verdict = 0;
  for (;;) {
    let ch = p < n ? text.charCodeAt(p) : -1;
    if (ch === 34) {
      // Quoted field: up to a quote that is not doubled.
      let value = "";
      let from = p + 1;
      for (;;) {
        const q = text.indexOf('"', from);
        if (q === -1 || (q + 1 === n && !final)) {
          out.verdict = q === -1 && final ? 2 : 1;
          return;
        }
        const next = q + 1 < n ? text.charCodeAt(q + 1) : -1;
        if (next === 34) {
          value += text.slice(from, q + 1);
          from = q + 2;
          continue;
        }
        if (next !== -1 && next !== delimiter && next !== 10 && next !== 13) {
          out.verdict = 2;
          return;
        }
        value += text.slice(from, q);
        p = q + 1;
        ch = next;
        break;
      }
      cells.push(value);
    } else {
      let e = p;
      while (e < n) {
        ch = text.charCodeAt(e);
        if (ch === delimiter || ch === 10 || ch === 13) break;
        // A quote inside an unquoted field: csv-parse's relaxed rules decide.
        if (ch === 34) {
          out.verdict = 2;
          return;
        }
        e++;
      }
      if (e === n) ch = -1;
      cells.push(text.slice(p, e));
      p = e;
    }
    // p is at the field's end: a delimiter, a line end, or the end of the text.
    if (ch === delimiter) {
      p++;
      continue;
    }
    out.end = recordEnd(text, p, ch, final, out);
    return;
  }
}

/** Past the line end at `p` (`ch` the character there, -1 the end of the text); a record that may go on sets verdict 1. */
function recordEnd(text: string, p: number, ch: number, final: boolean, out: RecordEnd): number {
  if (ch === -1) {
    if (!final) out.verdict = 1;
    return p;
  }
  if (ch !== 13) return p + 1;
  // "\r" at the end of the text may be the first half of "\r\n".
  if (p + 1 === text.length && !final) {
    out.verdict = 1;
    return p;
  }
  if (text.charCodeAt(p + 1) !== 10) return p + 1;
  out.crlf = 1;
  return p + 2;
}

type CsvParser = AsyncIterable<string[]> & { info: { lines: number } } & NodeJS.WritableStream;

/** What `readPlainThenParse` needs from outside; passed in so that it stays self-contained. */
export interface PlainThenParseDeps {
  scan: typeof scanPlainRecords;
  /** csv-parse's `parse` (the stream API); may load csv-parse first, which only files that are not plain need. */
  parse: (options: Record<string, unknown>) => CsvParser | Promise<CsvParser>;
  pipeline: (source: AsyncIterable<string>, destination: NodeJS.WritableStream) => Promise<void>;
}

/**
 * Records of a UTF-8 byte stream (without its BOM), in arrays of up to
 * `chunkRows`: the plain ones by `scan`, everything from the first record
 * that is not plain by csv-parse with `options` (errors included).
 */
export async function* readPlainThenParse(
  bytes: AsyncIterable<Uint8Array>,
  options: { delimiter: string; max_record_size: number } & Record<string, unknown>,
  chunkRows: number,
  deps: PlainThenParseDeps,
): AsyncGenerator<string[][]> {
  const input: TextInput = {
    source: bytes[Symbol.asyncIterator](),
    decode: utf8Decoder(options.bom === true),
    ended: false,
  };
  const delimiter = options.delimiter.length === 1 ? options.delimiter.charCodeAt(0) : -1;
  // Fields and line ends are told apart by these; anything else goes to csv-parse.
  const usable = delimiter !== -1 && delimiter !== 34 && delimiter !== 10 && delimiter !== 13;
  const result: ScanResult = { pos: 0, status: 0, crlf: 0 };
  let text = "";
  // Text read but not scanned yet, after `text` (see below).
  let queued = "";
  let final = false;
  // `text` is an unfinished record joined with the first line of the text after it (below).
  let joinedOneLine = false;
  let rows: string[][] = [];
  // csv-parse counts every \r and \n towards its line numbers, but a "\r\n" ending a record once.
  let lineBreaks = 0;
  while (usable) {
    deps.scan(text, result.pos, delimiter, final, options.max_record_size, rows, chunkRows, result);
    if (result.status === 2) break;
    if (result.status === 1) {
      yield rows;
      rows = [];
      continue;
    }
    if (final) {
      if (rows.length > 0) yield rows;
      return;
    }
    lineBreaks += lineBreaksIn(text, result.pos);
    // An unfinished record is scanned again from its start: read at least as much again as it
    // holds, so that a record of many reads (a 10 MB cell) costs linear time, not quadratic.
    let fresh = await readAtLeast(input, queued, text.length - result.pos);
    queued = "";
    const unfinished = text.slice(result.pos);
    // The record a read ended in, joined with the whole next read, made the scan copy that read
    // into one flat string: a row's worth of garbage a row. Joined with the next read's first line
    // only, where it most likely ends, it leaves the rest of the read to be scanned as it came. Not
    // twice in a row, so that a record of many lines is still read in linear time.
    if (unfinished !== "" && !joinedOneLine) {
      const line = fresh.indexOf("\n") + 1;
      if (line > 0 && line < fresh.length) {
        queued = fresh.slice(line);
        fresh = fresh.slice(0, line);
      }
    }
    joinedOneLine = queued !== "";
    text = unfinished + fresh;
    final = input.ended && queued === "";
    result.pos = 0;
  }
  lineBreaks += lineBreaksIn(text, result.pos);
  if (rows.length > 0) yield rows;
  // The rest goes to csv-parse: a BOM is no longer at the start, and line numbers go on from here.
  yield* parseTheRest(
    input,
    text.slice(result.pos) + queued,
    lineBreaks - result.crlf,
    options,
    chunkRows,
    deps,
  );
}

/** The byte stream being decoded, and whether it has ended. */
interface TextInput {
  source: AsyncIterator<Uint8Array>;
  decode: (chunk?: Uint8Array) => string;
  ended: boolean;
}

/**
 * A streaming UTF-8 decoder that drops a BOM at the start of the stream, and
 * only there, as csv-parse's `bom: true` does. Not by TextDecoder: on Node 24
 * a streaming decoder fed a byte at a time also dropped a U+FEFF that came
 * after the first character, where csv-parse keeps it.
 */
function utf8Decoder(bom: boolean): (chunk?: Uint8Array) => string {
  const decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  let atStart = bom;
  return (chunk) => {
    const text = chunk === undefined ? decoder.decode() : decoder.decode(chunk, { stream: true });
    if (!atStart || text === "") return text;
    atStart = false;
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  };
}

/** `queued`, and more text read after it while it is empty or shorter than `pending` and the stream goes on. */
async function readAtLeast(input: TextInput, queued: string, pending: number): Promise<string> {
  let fresh = queued;
  if (input.ended || (fresh !== "" && fresh.length >= pending)) return fresh;
  do {
    const next = await input.source.next();
    if (next.done) {
      input.ended = true;
      return fresh + input.decode();
    }
    fresh += input.decode(next.value);
  } while (fresh.length < pending);
  return fresh;
}

function lineBreaksIn(text: string, end: number): number {
  let breaks = 0;
  for (let i = 0; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 10 || c === 13) breaks++;
  }
  return breaks;
}

/** csv-parse over `rest` and what the stream still holds, its line numbers going on after `lines`. */
async function* parseTheRest(
  input: TextInput,
  rest: string,
  lines: number,
  options: Record<string, unknown>,
  chunkRows: number,
  deps: PlainThenParseDeps,
): AsyncGenerator<string[][]> {
  const parser = await deps.parse({ ...options, bom: false });
  parser.info.lines += lines;
  async function* remaining(): AsyncGenerator<string> {
    if (rest !== "") yield rest;
    if (input.ended) return;
    for (let next = await input.source.next(); !next.done; next = await input.source.next()) {
      yield input.decode(next.value);
    }
    const tail = input.decode();
    if (tail !== "") yield tail;
  }
  let failure: unknown;
  const done = deps.pipeline(remaining(), parser).catch((err: unknown) => {
    failure = err;
  });
  let rows: string[][] = [];
  try {
    for await (const cells of parser) {
      rows.push(cells);
      if (rows.length >= chunkRows) {
        yield rows;
        rows = [];
      }
    }
  } catch (err) {
    failure ??= err;
  }
  await done;
  // The rows before a failure still go out: the error names the last of them.
  if (rows.length > 0) yield rows;
  if (failure !== undefined) throw failure;
}
