// 3. Preview: a dry run of the whole file with the mapping on the page.
import { PreviewAnswer } from "../api-contract.ts";
import { call, reasonOf } from "./api.ts";
import { box, caption, counts, fillTable } from "./dom.ts";
import { busy, definition } from "./mapping.ts";
import { clearProblem, showProblem } from "./problem.ts";
import { page } from "./state.ts";
import { shown } from "./words.ts";

/** The preview of the file on the page with the mapping on the page. */
export async function preview(): Promise<void> {
  const upload = page.upload;
  if (!upload) return;
  clearProblem();
  busy(true, "Checking every row…");
  try {
    const answer = await call(PreviewAnswer, "POST", `api/uploads/${upload.uploadId}/preview`, {
      definition: definition(),
    });
    showPreview(answer);
    busy(false);
    box("preview-title").scrollIntoView({ block: "start" });
  } catch (err) {
    busy(false);
    const { message, problems } = reasonOf(err);
    showProblem(message, problems);
  }
}

/** The preview: its counts, the first people as they would be sent, the first rejected rows. */
export function showPreview(p: PreviewAnswer): void {
  const r = p.report;
  const imported = r.kind === "import" ? r.imported : r.updated;
  counts("preview-counts", [
    ["rows read", r.rowsRead],
    ["would be imported", imported],
    ["rejected", r.rejected],
    ["merged duplicates", r.duplicates],
    ["would be opted out", r.kind === "import" ? r.optedOut : 0],
    ["held back as not opted out", r.kind === "import" ? r.optInsHeldBack : 0],
  ]);
  const notes: string[] = [];
  if (r.kind === "import") {
    if (r.wouldBeRefused) notes.push(`Careful: ${r.wouldBeRefused}`);
    if (r.unmappedColumns.length) notes.push(`Not imported: ${r.unmappedColumns.join(", ")}.`);
    if (r.optInsHeldBack) notes.push(`${r.optInsHeldBack} rows saying "not opted out" are held back.`);
  }
  notes.push(...r.warnings);
  box("preview-notes").textContent = notes.join(" ");
  const fields = [...new Set(p.sent.flatMap((s) => Object.keys(s.person)))];
  fillTable(
    "sent",
    [...fields, "population"],
    p.sent.map((s) => {
      const values = new Map(Object.entries(s.person));
      return [...fields.map((f) => shown(values.get(f))), s.population ?? ""];
    }),
  );
  fillTable(
    "rejected",
    ["row", "why", ...p.rejectedHeaders],
    p.rejected.map((row) => [String(row.row), row.reason, ...row.cells]),
  );
  caption("rejected").textContent = p.rejected.length
    ? `Rows that would be rejected, and why (first ${p.rejected.length} of ${r.rejected})`
    : "No row would be rejected";
  box("preview").hidden = false;
}
