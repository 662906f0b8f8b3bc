/** Exit codes of every recruit-sync command (DESIGN.md, "Contracts"). */
export const EXIT = {
  ok: 0,
  /** The job ran and failed. */
  jobFailed: 1,
  /** Bad usage or invalid configuration: nothing was run. */
  usage: 2,
} as const;
