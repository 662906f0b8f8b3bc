import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/setup/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Vitest's own default for a run is one worker less than the CPUs: on a
    // two-CPU machine, one test file at a time. Most of a file's time here is
    // spent waiting (child processes, servers on loopback, timers), so one
    // file per CPU runs the suite in less time (docs/performance.md, "The test suite").
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
