export { barLines } from "./bar-lines.ts";
export { followedProgress, inlineProgress } from "./command-progress.ts";
export { LiveRegion, type OutStream } from "./live-region.ts";
export { progressLine } from "./progress-line.ts";
export {
  type AnyProgress,
  createProgressView,
  type ProgressView,
  type ProgressViewOptions,
} from "./progress-view.ts";
export { importReportTable } from "./report-table.ts";
