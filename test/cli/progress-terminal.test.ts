import { describe, expect, it, vi } from "vitest";
import { createProgressView } from "../../src/cli/progress/index.ts";
import type { ImportProgress } from "../../src/imports/index.ts";
import { capture, importAt } from "./progress-fixtures.ts";

/** A stream that looks like a terminal of `columns`; its text shows ESC as ⎋. */
function fakeTerminal(columns = 100) {
  const { stream, text } = capture(true, columns);
  return { stream, text: () => text().replaceAll("\x1b", "⎋") };
}

/** The text of the last drawing: what follows the last move of the cursor back up over the lines. */
function lastDrawing(text: string): string {
  const ups = [...text.matchAll(/⎋\[\d+A/g)];
  return text.slice(ups.at(-1)?.index ?? 0);
}

function sending(over: Partial<ImportProgress> = {}): ImportProgress {
  return importAt("send", { bytesRead: 1000, bytesTotal: 1000, rowsRead: 1000, ...over });
}

describe("the terminal view", () => {
  it("follows a job from waiting for a worker to its bars, and draws nothing once closed", async () => {
    const out = fakeTerminal();
    const view = createProgressView(out.stream, { redrawMs: 10 });
    view.update("waiting", {
      kind: "pending",
      budgetWaitMs: 0,
      message: "no worker serves the imports queue",
    });
    expect(out.text()).toContain("waiting for a worker: no worker serves the imports queue");
    view.update("active", { ...sending({ imported: 250, batches: 1, requests: 1 }), budgetWaitMs: 0 });
    await vi.waitFor(() => expect(out.text()).toMatch(/running send +\[#{6}-{18}\] +25%/));
    view.close();
    const closed = out.text();
    expect(closed).toContain("rows 1,000  imported 250  rejected 0  batches 1  requests 1");
    expect(closed).toContain("  sending batches");
    // cli-progress's timer is gone: ten redraw periods later nothing more was written.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(out.text()).toBe(closed);
  });

  it("shows the projected finish while sending, and drops a wait's resume time once it has passed", async () => {
    let t = Date.parse("2026-11-23T10:00:00Z");
    const out = fakeTerminal();
    const view = createProgressView(out.stream, { redrawMs: 10, now: () => t });
    view.update("import", sending());
    t += 10_000;
    view.update("import", sending({ imported: 100, batches: 1, requests: 1 }));
    view.budgetWait(5_000, new Date(t + 5_000));
    // 100 rows in the 10 s since the start less 5 s waiting: the 900 left take 45 s once the wait ends.
    const finish = new Date(t + 50_000).toTimeString().slice(0, 8);
    const resume = new Date(t + 5_000).toTimeString().slice(0, 8);
    await vi.waitFor(() => {
      const drawing = lastDrawing(out.text());
      expect(drawing).toContain(`  sending batches, finishing about ${finish}⎋`);
      expect(drawing).toContain(
        `  5.0 s waiting on the rate budget, waiting for the rate budget until ${resume}⎋`,
      );
    });
    // No update: the clock alone moves past the resume time, and the next redraw says so.
    t += 6_000;
    await vi.waitFor(() => expect(lastDrawing(out.text())).not.toContain("until"));
    view.close();
    expect(lastDrawing(out.text())).toContain("5.0 s waiting on the rate budget");
  });

  it("projects a followed job's finish from when its worker took it", () => {
    const t = Date.parse("2026-11-23T10:00:00Z");
    const out = fakeTerminal();
    out.stream.isTTY = false;
    const view = createProgressView(out.stream, { now: () => t });
    // What --wait hands on: the job's state, its progress and when a worker took it (job.processedOn).
    view.update("active", { ...sending({ imported: 400, batches: 1 }), budgetWaitMs: 0 }, t - 20_000);
    view.close();
    // 400 in 20 s: the 600 left take 30 s.
    const finish = new Date(t + 30_000).toTimeString().slice(0, 8);
    expect(out.text()).toBe(
      `running: send 40%, 1,000 rows read, 400 imported, 0 rejected, 1 batches, finishing about ${finish}\n`,
    );
  });
});
