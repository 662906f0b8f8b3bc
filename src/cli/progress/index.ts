export { followedProgress, inlineProgress } from "./command-progress.ts";
export { clockTime, plainLine, progressLine } from "./plain-line.ts";
export {
  type AnyProgress,
  createProgressView,
  type ProgressView,
  type ProgressViewOptions,
} from "./progress-view.ts";
export { importReportTable } from "./report-table.ts";
export { type OutStream, TerminalBars } from "./terminal-bars.ts";
export { type TerminalLine, terminalLines } from "./terminal-lines.ts";
