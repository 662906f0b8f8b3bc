/**
 * Scrambles the people in a CSV/CRM export before it enters the corpus
 * (test/corpus/), keeping every quirk of the file byte for byte: encoding,
 * BOM, delimiter, quoting, trailing delimiters, line endings, empty cells,
 * multi-value separators. Only letters and digits inside personal cells change.
 *
 *   npx tsx scripts/scramble-export.ts IN OUT --seed corpus-1 [--phone-country DE]
 *     [--rows N] [--names COL,…] [--text COL,…] [--address COL,…] [--dates COL,…]
 *     [--phones COL,…] [--emails COL,…] [--keep COL,…] [--encoding windows-1251]
 *
 * Columns are classified by header words (names, emails, phones, street
 * addresses, birthdays, free text); the flags add to that or keep a column as
 * it is. Every cell of every column is also searched for email addresses, and
 * name and free-text cells for phone numbers. The same original value always
 * gives the same fake one (a keyed hash of the seed and the value), so
 * duplicates stay duplicates and a hand count made on the original holds.
 *
 * Emails keep their top-level domain (`.de` stays `.de`, `.co.uk` stays
 * `.co.uk`) and nothing else. Phones keep their punctuation, their `+` and
 * country code, and their first national digits; the rest is drawn again until
 * libphonenumber-js agrees the fake is valid exactly when the original was
 * (national numbers are judged in --phone-country).
 */
import { createHmac } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import iconv from "iconv-lite";
import { type CountryCode, parsePhoneNumberFromString } from "libphonenumber-js";

type Kind = "keep" | "name" | "email" | "phone" | "address" | "date" | "text" | "other";

interface Options {
  input: string;
  output: string;
  seed: string;
  phoneCountry?: CountryCode;
  rows?: number;
  /** A single-byte body that is not windows-1252 (an Outlook export in windows-1251). */
  encoding?: string;
  forced: Map<string, Kind>;
}

function parseArgs(argv: string[]): Options {
  const positional: string[] = [];
  const forced = new Map<string, Kind>();
  let seed = "";
  let phoneCountry: CountryCode | undefined;
  let rows: number | undefined;
  let encoding: string | undefined;
  const kinds: Record<string, Kind> = {
    "--names": "name",
    "--text": "text",
    "--address": "address",
    "--dates": "date",
    "--phones": "phone",
    "--emails": "email",
    "--keep": "keep",
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    const next = () => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === "--seed") seed = next();
    else if (a === "--phone-country") phoneCountry = next().toUpperCase() as CountryCode;
    else if (a === "--rows") rows = Number(next());
    else if (a === "--encoding") encoding = next().toLowerCase();
    else if (a in kinds) for (const col of next().split(",")) forced.set(col, kinds[a] as Kind);
    else positional.push(a);
  }
  const [input, output] = positional;
  if (!input || !output || !seed) {
    throw new Error(
      "usage: scramble-export.ts IN OUT --seed SEED [--phone-country CC] [--rows N] [--names COL,…] …",
    );
  }
  return {
    input,
    output,
    seed,
    forced,
    ...(phoneCountry ? { phoneCountry } : {}),
    ...(rows ? { rows } : {}),
    ...(encoding ? { encoding } : {}),
  };
}

// ---------- bytes <-> text, keeping the BOM and the encoding ----------

interface Decoded {
  bom: Buffer;
  encoding: string;
  text: string;
}

function decode(bytes: Buffer, forced?: string): Decoded {
  if (forced) {
    if (!iconv.encodingExists(forced)) throw new Error(`unknown encoding ${forced}`);
    const bom =
      bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(0, 3) : Buffer.alloc(0);
    return { bom, encoding: forced, text: iconv.decode(bytes.subarray(bom.length), forced) };
  }
  if (bytes[0] === 0xff && bytes[1] === 0xfe) {
    return {
      bom: bytes.subarray(0, 2),
      encoding: "utf-16le",
      text: iconv.decode(bytes.subarray(2), "utf-16le"),
    };
  }
  const bom =
    bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? bytes.subarray(0, 3) : Buffer.alloc(0);
  const body = bytes.subarray(bom.length);
  try {
    return { bom, encoding: "utf-8", text: new TextDecoder("utf-8", { fatal: true }).decode(body) };
  } catch {
    // A BOM may sit over a windows-1252 body (Google's Outlook CSV): keep both as found.
    return { bom, encoding: "windows-1252", text: iconv.decode(body, "windows-1252") };
  }
}

function encode(d: Decoded, text: string): Buffer {
  return Buffer.concat([d.bom, iconv.encode(text, d.encoding)]);
}

// ---------- a CSV tokenizer that keeps every byte of the layout ----------

interface Cell {
  value: string;
  quoted: boolean;
}
interface Record_ {
  cells: Cell[];
  /** What ends the record: "\n", "\r\n", "\r" or "" at the end of the file. */
  eol: string;
}

function detectDelimiter(text: string): string {
  const firstLine = text.split(/\r\n|\n|\r/, 1)[0] ?? "";
  let best = ",";
  let bestCount = 0;
  for (const d of [",", ";", "\t", "|"]) {
    let count = 0;
    let inQuotes = false;
    for (const ch of firstLine) {
      if (ch === '"') inQuotes = !inQuotes;
      else if (ch === d && !inQuotes) count++;
    }
    if (count > bestCount) {
      best = d;
      bestCount = count;
    }
  }
  return best;
}

function tokenize(text: string, delimiter: string): Record_[] {
  const records: Record_[] = [];
  let cells: Cell[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    let value = "";
    let quoted = false;
    if (text[i] === '"') {
      quoted = true;
      i++;
      while (i < n) {
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            value += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        value += text[i];
        i++;
      }
      // Anything between the closing quote and the delimiter is kept as written.
      while (i < n && text[i] !== delimiter && text[i] !== "\n" && text[i] !== "\r") value += text[i++];
    } else {
      while (i < n && text[i] !== delimiter && text[i] !== "\n" && text[i] !== "\r") value += text[i++];
    }
    cells.push({ value, quoted });
    if (i >= n) {
      records.push({ cells, eol: "" });
      break;
    }
    if (text[i] === delimiter) {
      i++;
      if (i >= n) {
        cells.push({ value: "", quoted: false });
        records.push({ cells, eol: "" });
      }
      continue;
    }
    const eol = text[i] === "\r" && text[i + 1] === "\n" ? "\r\n" : (text[i] as string);
    i += eol.length;
    records.push({ cells, eol });
    cells = [];
  }
  return records;
}

function serialize(records: Record_[], delimiter: string): string {
  return records
    .map(
      (r) =>
        r.cells
          .map((c) => {
            if (c.quoted) return `"${c.value.replaceAll('"', '""')}"`;
            if (c.value.includes(delimiter) || /["\r\n]/.test(c.value)) {
              throw new Error(
                `a fake value needs quotes where the original had none: ${c.value.length} chars`,
              );
            }
            return c.value;
          })
          .join(delimiter) + r.eol,
    )
    .join("");
}

// ---------- deterministic fakes ----------

class Rng {
  private state: number;
  constructor(seed: string, ...parts: string[]) {
    const h = createHmac("sha256", seed).update(parts.join("\u0000")).digest();
    this.state = h.readUInt32LE(0) || 1;
  }
  next(): number {
    // xorshift32
    let x = this.state;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.state = x >>> 0;
    return this.state / 0x100000000;
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)] as T;
  }
}

const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ren",
  "ta",
  "vel",
  "do",
  "sa",
  "ni",
  "mar",
  "el",
  "be",
  "tor",
  "an",
  "li",
  "ro",
  "fe",
  "gu",
  "ha",
  "ne",
  "sti",
  "ol",
  "pa",
  "ri",
  "da",
  "ven",
  "ju",
  "co",
];
const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"];

// Cyrillic names stay Cyrillic, so a windows-1251 file keeps its high bytes.
const CYRILLIC_SYLLABLES = [
  "ка",
  "ло",
  "ми",
  "на",
  "ре",
  "со",
  "ту",
  "ва",
  "ди",
  "ен",
  "ов",
  "ар",
  "ин",
  "ко",
  "ле",
];

function fakeWord(rng: Rng, length: number, model = ""): string {
  const syllables = /\p{Script=Cyrillic}/u.test(model) ? CYRILLIC_SYLLABLES : SYLLABLES;
  let w = "";
  while (w.length < length) w += rng.pick(syllables);
  return w.slice(0, Math.max(1, length));
}

function withCase(model: string, word: string): string {
  if (model.length > 1 && model === model.toUpperCase() && model !== model.toLowerCase())
    return word.toUpperCase();
  const first = model[0] ?? "";
  if (first !== first.toLowerCase()) return (word[0] ?? "").toUpperCase() + word.slice(1);
  return word;
}

class Scrambler {
  constructor(
    private readonly seed: string,
    private readonly phoneCountry: CountryCode | undefined,
  ) {}

  /** Letter runs become fake words of the same length and case; digit runs fresh digits. */
  words(value: string, salt: string): string {
    return value.replace(/\p{L}+|\p{N}+/gu, (run) => {
      const rng = new Rng(this.seed, salt, run.toLowerCase());
      if (/^\p{N}+$/u.test(run)) return this.digits(rng, run.length);
      return withCase(run, fakeWord(rng, run.length, run));
    });
  }

  digits(rng: Rng, length: number): string {
    let d = "";
    for (let i = 0; i < length; i++) d += String(rng.int(10));
    return d;
  }

  /** Fake addresses handed out so far: two different people never share one (a hand count holds). */
  private readonly fakeEmails = new Map<string, string>();
  private readonly usedFakeEmails = new Set<string>();

  email(original: string): string {
    const key = original.toLowerCase();
    const known = this.fakeEmails.get(key);
    if (known !== undefined) return known;
    let fake = this.drawEmail(original);
    const rng = new Rng(this.seed, "email-collision", key);
    while (this.usedFakeEmails.has(fake.toLowerCase())) {
      const at = fake.lastIndexOf("@");
      fake = `${fake.slice(0, at)}${this.digits(rng, 1)}${fake.slice(at)}`;
    }
    this.fakeEmails.set(key, fake);
    this.usedFakeEmails.add(fake.toLowerCase());
    return fake;
  }

  private drawEmail(original: string): string {
    const at = original.lastIndexOf("@");
    const local = original.slice(0, at);
    const domain = original.slice(at + 1);
    const labels = domain.split(".");
    const last = labels[labels.length - 1] ?? "";
    const second = labels[labels.length - 2] ?? "";
    const keepTwo =
      labels.length >= 3 &&
      /^[a-z]{2}$/i.test(last) &&
      /^(co|com|org|net|edu|ac|gov|gob|or|ne)$/i.test(second);
    const suffix = labels.length < 2 ? "" : keepTwo ? `.${second}.${last}` : `.${last}`;
    const rng = new Rng(this.seed, "email", original.toLowerCase());
    const domainRng = new Rng(this.seed, "domain", domain.toLowerCase());
    let fakeLocal = fakeWord(rng, Math.min(Math.max(local.length, 3), 12));
    if (/\d/.test(local)) fakeLocal += this.digits(rng, Math.min(local.replace(/\D/g, "").length, 4));
    if (local.includes(".") && fakeLocal.length > 3)
      fakeLocal = `${fakeLocal.slice(0, 2)}.${fakeLocal.slice(2)}`;
    const fakeDomain = `${fakeWord(domainRng, 5 + domainRng.int(5))}${suffix}`;
    return `${withCase(local, fakeLocal)}@${fakeDomain}`;
  }

  /** Every email address in a cell, wherever it sits. */
  emails(value: string): string {
    return value.replace(/[^\s@,;:<>"'()[\]]+@[^\s@,;:<>"'()[\]]+/g, (m) => {
      const trail = m.match(/[.]+$/)?.[0] ?? "";
      return this.email(m.slice(0, m.length - trail.length)) + trail;
    });
  }

  isValidPhone(candidate: string): boolean {
    const digits = candidate.replace(/[^\d+]/g, "");
    const p = digits.startsWith("+")
      ? parsePhoneNumberFromString(digits)
      : this.phoneCountry
        ? parsePhoneNumberFromString(digits, this.phoneCountry)
        : undefined;
    return p?.isValid() ?? false;
  }

  phone(original: string): string {
    const allDigits = original.replace(/\D/g, "");
    if (allDigits.length < 4) return this.words(original, "phone-short");
    const valid = this.isValidPhone(original);
    const international = /^\D*\+/.test(original);
    let keep = 3;
    if (international) {
      const cc = parsePhoneNumberFromString(`+${allDigits}`)?.countryCallingCode ?? allDigits.slice(0, 2);
      keep = cc.length + 2;
    }
    keep = Math.min(keep, allDigits.length - 2);
    const rng = new Rng(this.seed, "phone", allDigits);
    let fallback = "";
    for (let attempt = 0; attempt < 400; attempt++) {
      const keepNow = attempt < 300 ? keep : Math.max(1, keep - 1);
      let index = 0;
      const fake = original.replace(/\d/g, (d) => {
        const kept = index < keepNow;
        index++;
        return kept ? d : String(rng.int(10));
      });
      if (fake.replace(/\D/g, "") === allDigits) continue;
      if (!fallback) fallback = fake;
      if (this.isValidPhone(fake) === valid) return fake;
    }
    return fallback;
  }

  /** Phone-shaped runs in a cell: each kept in shape, any digits left over redrawn. */
  phones(value: string): string {
    const replaced = value.replace(/'?\+?\(?\d[\d ()/.\u00a0-]{4,}\d/g, (m) => this.phone(m));
    return replaced;
  }

  /** Emails and phones as such, the letters and digits around them as words. */
  personal(value: string, salt: string): string {
    const pattern = /[^\s@,;:<>"'()[\]]+@[^\s@,;:<>"'()[\]]+|'?\+?\(?\d[\d ()/.\u00a0-]{4,}\d/g;
    let out = "";
    let last = 0;
    for (const m of value.matchAll(pattern)) {
      const at = m.index ?? 0;
      out += this.words(value.slice(last, at), salt);
      out += m[0].includes("@") ? this.emails(m[0]) : this.phone(m[0]);
      last = at + m[0].length;
    }
    return out + this.words(value.slice(last), salt);
  }

  date(value: string): string {
    const rng = new Rng(this.seed, "date", value);
    return value.replace(/\p{L}+|\p{N}+/gu, (run) => {
      if (/^\p{L}+$/u.test(run)) {
        return MONTHS.includes(run.slice(0, 3).toLowerCase()) && run.length === 3
          ? withCase(run, rng.pick(MONTHS))
          : withCase(run, fakeWord(rng, run.length));
      }
      if (run.length === 4) return `${run.slice(0, 2)}${this.digits(rng, 2)}`;
      if (run.length <= 2) {
        const n = 1 + rng.int(12);
        return run.length === 2 ? String(n).padStart(2, "0") : String(Math.min(n, 9));
      }
      return this.digits(rng, run.length);
    });
  }

  cell(kind: Kind, value: string): string {
    if (value.trim() === "" || kind === "keep") return value;
    switch (kind) {
      case "email":
        return this.emails(value);
      case "phone": {
        // Phones first, then any digits left (an extension such as " | -100").
        const withPhones = this.phones(this.emails(value));
        return withPhones;
      }
      case "name":
        return this.personal(value, "name");
      case "address":
        return this.words(this.emails(value), "address");
      case "date":
        return this.date(value);
      case "text":
        return this.personal(value, "text");
      default:
        return this.emails(value);
    }
  }
}

// ---------- which column holds what ----------

const NOT_A_PERSON =
  /company|organi[sz]ation|firma|empresa|soci[eé]t[eé]|account name|event|campaign|ticket|survey|form\b|file as|domain|website|web page|url|labels?|tags?|group|type|status|source|stage|industry|position|job|title|department|abteilung|bereich|standort/i;

export function classify(header: string): Kind {
  const h = header.trim();
  if (/\btype\b/i.test(h)) return "keep";
  if (/\bdate\b|time\b|created|modified|updated|timestamp/i.test(h) && !/birth|geburt|nacimiento/i.test(h))
    return "other";
  if (/e-?mail|correo|courriel/i.test(h)) return /type|verified|status|opt|owner/i.test(h) ? "keep" : "email";
  if (
    /phone|tel[eé]fono|telefon|mobil|handy|m[oó]vil|celular|cell|whatsapp|fax|pager|b[uü]ro|privat/i.test(h)
  ) {
    return /type|opt|marketing|accepts/i.test(h) ? "keep" : "phone";
  }
  if (/birth|geburt|nacimiento|anniversary/i.test(h)) return "date";
  if (/city|province|zip|postal|country|state|region|parish|ort\b|ciudad|pa[ií]s/i.test(h)) return "other";
  if (/street|stra[sß]e|address|adresse|direcci[oó]n|addr|calle/i.test(h) && !/e-?mail|ip\b/i.test(h))
    return "address";
  if (/owner|assigned/i.test(h)) return "name";
  if (
    /note|notiz|bemerk|comment|descri|message|nachricht|availability|answer|emergency|\bice\b|spouse|children|referred|assistant|manager's|nickname/i.test(
      h,
    )
  ) {
    return "text";
  }
  if (NOT_A_PERSON.test(h)) return "other";
  if (
    /name|vorname|nachname|nombre|apellido|first|last|given|family|middle|surname|initials|suffix|prefix/i.test(
      h,
    )
  ) {
    return "name";
  }
  if (/_ip$|\bip\b/i.test(h)) return "text";
  return "other";
}

function main(): void {
  const opts = parseArgs(process.argv.slice(2));
  const decoded = decode(readFileSync(opts.input), opts.encoding);
  const delimiter = detectDelimiter(decoded.text);
  const records = tokenize(decoded.text, delimiter);
  const [header, ...data] = records;
  if (!header) throw new Error(`${opts.input} is empty`);
  const kinds = header.cells.map((c) => opts.forced.get(c.value.replace(/^\uFEFF/, "")) ?? classify(c.value));
  const kept = opts.rows !== undefined ? data.slice(0, opts.rows) : data;
  // A trimmed file ends as the original did (a last line ending or none).
  const lastOriginal = data[data.length - 1];
  const lastKept = kept[kept.length - 1];
  if (lastKept && lastOriginal && lastKept !== lastOriginal && lastOriginal.eol === "") {
    kept[kept.length - 1] = { ...lastKept, eol: "" };
  }
  const s = new Scrambler(opts.seed, opts.phoneCountry);
  for (const record of kept) {
    record.cells = record.cells.map((cell, i) => ({
      ...cell,
      value: s.cell(kinds[i] ?? "other", cell.value),
    }));
  }
  writeFileSync(opts.output, encode(decoded, serialize([header, ...kept], delimiter)));
  const summary = header.cells.map((c, i) => `${c.value}=${kinds[i]}`).filter((x) => !x.endsWith("=other"));
  process.stderr.write(
    `${opts.output}: ${kept.length} rows, ${decoded.encoding}${decoded.bom.length ? " with BOM" : ""}, delimiter ${JSON.stringify(delimiter)}; scrambled ${summary.join(", ")}\n`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) main();
