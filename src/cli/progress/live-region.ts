/** What the progress view writes to: process.stdout, or a test's stream. */
export interface OutStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

/** Cut to the terminal's width: a wrapped line would break the count of lines to redraw. */
function fitWidth(line: string, columns: number): string {
  const max = Math.max(10, columns - 1);
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * A block of lines at the bottom of a terminal, redrawn in place with plain
 * ANSI (cursor up, clear to the end of the screen). Anything else printed
 * meanwhile goes through `above`, so it lands over the block, not inside it.
 */
export class LiveRegion {
  readonly #out: OutStream;
  #drawn = 0;
  #lines: string[] = [];

  constructor(out: OutStream) {
    this.#out = out;
  }

  #erase(): string {
    return this.#drawn ? `\x1b[${this.#drawn}A\x1b[J` : "";
  }

  #paint(): string {
    const columns = this.#out.columns || 80;
    this.#drawn = this.#lines.length;
    return this.#lines.map((l) => `${fitWidth(l, columns)}\n`).join("");
  }

  draw(lines: string[]): void {
    this.#lines = lines;
    this.#out.write(this.#erase() + this.#paint());
  }

  /** Runs `write` (a log line, say) with the block lifted out of the way, then puts it back. */
  above(write: () => void): void {
    if (this.#drawn) this.#out.write(this.#erase());
    this.#drawn = 0;
    write();
    if (this.#lines.length) this.#out.write(this.#paint());
  }

  /** Leaves the last drawing on screen; what is written next goes below it. */
  release(): void {
    this.#drawn = 0;
    this.#lines = [];
  }
}
