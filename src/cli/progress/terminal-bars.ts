import cliProgress, { type GenericFormatter, type SingleBar } from "cli-progress";
import type { TerminalLine } from "./terminal-lines.ts";

/** What the progress view writes to: process.stdout, or a test's stream. */
export interface OutStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
}

/** A bar's payload: every key set each time, since cli-progress merges a payload into the last one. */
interface LinePayload {
  text: string | null;
  before: string;
  after: string;
  barWidth: number;
}

/** The widest bar; a line may ask for a narrower one. */
const BAR_WIDTH = 24;

/** Cut to the terminal's width: a wrapped line would break the count of lines to redraw. */
function fitWidth(line: string, columns: number): string {
  const max = Math.max(10, columns - 1);
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

const formatLine: GenericFormatter = (options, params, payload: LinePayload) => {
  const line =
    payload.text ??
    cliProgress.Format.Formatter(
      // The bar strings cli-progress pre-renders are BAR_WIDTH long: a narrower bar takes a prefix of them.
      { ...options, format: "{before}[{bar}]{after}", barsize: Math.min(BAR_WIDTH, payload.barWidth) },
      params,
      payload,
    );
  return fitWidth(line, params.maxWidth);
};

/**
 * cli-progress keeps the count of lines it drew in its terminal object, which
 * its types leave out; lifting the bars for a log line on standard error
 * needs it (MultiBar.log would print the line on standard output instead).
 */
interface BarTerminal {
  cursorRelativeReset(): void;
  clearBottom(): void;
}

/**
 * Lines at the bottom of a terminal, redrawn in place by a cli-progress
 * MultiBar, one bar per line. `lines` is asked before every redraw, so a
 * clock-driven change (a wait that ends) shows without an update.
 */
export class TerminalBars {
  readonly #multi: cliProgress.MultiBar;
  readonly #bars: SingleBar[] = [];
  readonly #lines: () => TerminalLine[];

  constructor(out: OutStream, redrawMs: number, lines: () => TerminalLine[]) {
    this.#lines = lines;
    this.#multi = new cliProgress.MultiBar({
      stream: out as unknown as NodeJS.WritableStream,
      fps: 1000 / Math.max(1, redrawMs),
      format: formatLine,
      barsize: BAR_WIDTH,
      barCompleteChar: "#",
      barIncompleteChar: "-",
      // Leave the terminal's own wrapping alone (a crash would leave it off); lines are cut to fit instead.
      linewrap: true,
      // Every redraw draws every line: after a log line lifted them, none is on screen.
      forceRedraw: true,
    });
    this.#multi.on("update-pre", () => this.#refresh());
  }

  #refresh(): void {
    const lines = this.#lines();
    const count = Math.max(lines.length, this.#bars.length);
    for (let i = 0; i < count; i++) {
      // A line that went away stays blank: removing a bar would move the ones below it.
      const line = lines[i] ?? { text: "" };
      const payload: LinePayload =
        "text" in line
          ? { text: line.text, before: "", after: "", barWidth: BAR_WIDTH }
          : { text: null, before: line.before, after: line.after, barWidth: line.barWidth ?? BAR_WIDTH };
      const value = "fraction" in line ? line.fraction : 0;
      const bar = this.#bars[i];
      if (bar) bar.update(value, payload);
      else this.#bars.push(this.#multi.create(1, value, payload));
    }
  }

  /** Draws the lines now rather than at the next tick. */
  draw(): void {
    // The first bars are made here, not inside a redraw: MultiBar starts its timer when the first one is made,
    // and one made within update() would leave a second timer running past stop().
    this.#refresh();
    this.#multi.update();
  }

  /** Runs `write` (a log line) with the lines lifted out of the way, then draws them again below it. */
  above(write: () => void): void {
    const terminal = (this.#multi as unknown as { terminal: BarTerminal }).terminal;
    terminal.cursorRelativeReset();
    terminal.clearBottom();
    write();
    this.#multi.update();
  }

  /** Draws the last state and leaves it on screen; what is written next goes below it. */
  stop(): void {
    this.#refresh();
    this.#multi.stop();
  }
}
