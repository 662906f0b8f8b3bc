// 1. The file and 2. what each column is: the upload, the suggested mapping,
// and the job definition the page makes of the choices on it.
import { type TransformWord, USUAL_TRANSFORMS } from "../../../config/column-targets.ts";
import type { ImportJobDefinitionInput } from "../../../config/import-job.ts";
import type { MappingSuggestion } from "../../../suggest/suggestion.ts";
import { UploadAnswer } from "../api-contract.ts";
import { call, reasonOf } from "./api.ts";
import { box, button, el, field, menu } from "./dom.ts";
import { clearProblem, showProblem } from "./problem.ts";
import { type PageColumn, page } from "./state.ts";
import {
  FIELD_TARGETS,
  fieldWords,
  identifierChoices,
  propertyWords,
  targetKey,
  targetOf,
} from "./targets.ts";
import { WHY } from "./words.ts";

/** Uploads a file: what the page shows of it, and the mapping suggested for it. */
export async function uploadFile(file: File): Promise<void> {
  clearProblem();
  for (const id of ["mapping", "preview", "run"]) box(id).hidden = true;
  box("file-status").textContent = `Uploading ${file.name} (${file.size.toLocaleString()} bytes)…`;
  try {
    const upload = await call(UploadAnswer, "POST", "api/uploads", formWith(file));
    page.upload = upload;
    page.base = upload.suggestion?.definition ?? null;
    box("file-status").textContent =
      `${upload.fileName ?? file.name}: ${upload.headers.length} columns, read as ${upload.encoding}.`;
    showMapping(upload);
  } catch (err) {
    box("file-status").textContent = "";
    const { message, problems } = reasonOf(err);
    showProblem(message, problems);
  }
}

/** A multipart body carrying the file in the field the server reads. */
export function formWith(file: File): FormData {
  const form = new FormData();
  form.append("file", file, file.name);
  return form;
}

/** The suggestion for each column, or the bare headers when there is none. */
function pageColumns(upload: UploadAnswer): PageColumn[] {
  const suggestion = upload.suggestion;
  const suggested = suggestion?.columns ?? [];
  const names = suggested.length ? suggested.map((c) => c.column) : upload.headers;
  const firstRows = suggestion?.header === false ? [upload.headers, ...upload.rows] : upload.rows;
  // A header written twice is told apart by its occurrence (job key columns[].occurrence).
  const key = (name: string) => name.trim().toLowerCase();
  const seen = new Map<string, number>();
  const totals = new Map<string, number>();
  for (const name of names) totals.set(key(name), (totals.get(key(name)) ?? 0) + 1);
  return names.map((column, index) => {
    const s = suggested[index];
    const nth = (seen.get(key(column)) ?? 0) + 1;
    seen.set(key(column), nth);
    return {
      column,
      occurrence: s?.occurrence ?? ((totals.get(key(column)) ?? 0) > 1 ? nth : undefined),
      suggestedKey: targetKey(s?.to),
      suggestedTransforms: s?.transforms ?? [],
      confidence: s?.confidence ?? 0,
      why: s?.why ?? "none",
      note: s?.note ?? "",
      values: firstRows
        .map((r) => r[index] ?? "")
        .filter((v) => v !== "")
        .slice(0, 3),
    };
  });
}

/** How sure the suggestion is: a bar and a percentage. */
function meter(confidence: number): HTMLElement {
  const pct = Math.round(confidence * 100);
  const bar = el("span", undefined, { class: `meter${pct < 60 ? " low" : ""}`, "aria-hidden": "true" });
  bar.append(el("span", undefined, { style: `width:${pct}%` }));
  const cell = el("td");
  cell.append(bar, document.createTextNode(`${pct}%`));
  return cell;
}

function columnRow(c: PageColumn, i: number): HTMLElement {
  const row = el("tr");
  const label = c.occurrence ? `${c.column} (${c.occurrence})` : c.column;
  row.append(el("th", label, { scope: "row" }), el("td", c.values.join(" · "), { class: "muted" }));
  const select = el("select", undefined, { id: `target-${i}`, "aria-label": `Import ${label} as` });
  select.append(el("option", "Leave out", { value: "" }));
  for (const f of FIELD_TARGETS) select.append(el("option", fieldWords(f), { value: f }));
  const property = propertyWords(c.suggestedKey);
  if (property) select.append(el("option", property, { value: c.suggestedKey }));
  const pick = el("td");
  pick.append(select);
  row.append(pick, meter(c.confidence), el("td", c.note || WHY[c.why]));
  select.value = c.suggestedKey;
  select.addEventListener("change", () => refreshIdentifiers());
  return row;
}

function showMapping(upload: UploadAnswer): void {
  const suggestion = upload.suggestion;
  page.columns = pageColumns(upload);
  box("file-name").textContent = upload.fileName ?? "the file";
  const body = box("columns").querySelector("tbody");
  body?.replaceChildren(...page.columns.map(columnRow));
  const definition = suggestion?.definition;
  const study = definition?.target.studyId;
  field("study").value = study && study !== "CHANGE-ME" ? study : "";
  field("job-name").value = definition?.name ?? "";
  field("phone-country").value = definition?.phoneCountry ?? suggestion?.phoneCountry?.country ?? "";
  showSuggestionOutcome(suggestion);
  refreshIdentifiers(definition?.target.identifier);
  const status = box("mapping-status");
  if (suggestion?.problems.length) {
    status.textContent = `The suggestion is not complete: ${suggestion.problems.map((p) => p.message).join("; ")}`;
  } else if (upload.suggestionError) {
    status.textContent = `No suggestion: ${upload.suggestionError}. Map the columns by hand.`;
  } else status.textContent = "";
  box("mapping").hidden = false;
}

/** What the suggestion found in the file's first rows: the phone country, the identifier, what a run would do. */
function showSuggestionOutcome(suggestion: MappingSuggestion | null): void {
  const lines: string[] = [];
  if (suggestion?.phoneCountry?.reason) lines.push(`Phone country: ${suggestion.phoneCountry.reason}`);
  if (suggestion?.identifier?.reason) lines.push(`Identifier: ${suggestion.identifier.reason}`);
  const o = suggestion?.outcome;
  if (o?.stopped) lines.push(`As suggested, the import would stop: ${o.stopped}`);
  else if (o) {
    const reasons = o.topReasons.map((r) => `${r.reason} (${r.rows})`).join("; ");
    lines.push(
      `Of the first ${o.rows} rows, ${o.imported} would be imported and ${o.rejected} rejected${
        reasons ? `: ${reasons}` : ""
      }. ${o.optedOut} would be opted out, ${o.heldBack} held back as "not opted out".`,
    );
    if (o.wouldRefuse) {
      lines.push("A real run would refuse this file as mapped: most of its first rows are rejected.");
    }
  }
  const list = box("suggestion-outcome");
  list.replaceChildren(...lines.map((line) => el("li", line)));
  list.hidden = lines.length === 0;
}

/** Each column with the target chosen in its menu. */
function chosenColumns(): (PageColumn & { key: string })[] {
  return page.columns.map((c, i) => ({ ...c, key: menu(`target-${i}`).value }));
}

/** The identifier menu: what the chosen targets allow, keeping the choice when it still can be. */
function refreshIdentifiers(wanted?: string): void {
  const select = menu("identifier");
  const previous = wanted ?? select.value;
  const choices = identifierChoices(new Set(chosenColumns().map((c) => c.key)));
  select.replaceChildren(...choices.map(([value, label]) => el("option", label, { value })));
  if (choices.some(([v]) => v === previous)) select.value = previous;
}

const usual = USUAL_TRANSFORMS as Partial<Record<string, readonly TransformWord[]>>;

/** The job definition as the page shows it: the suggestion's, with the columns, identifier, study and name chosen here. */
export function definition(): ImportJobDefinitionInput {
  // Every column is listed: a preset would map again the columns a person chose to leave out.
  const {
    preset: _preset,
    name: _name,
    phoneCountry: _country,
    ...base
  } = page.base ?? ({ kind: "import", target: { studyId: "" } } satisfies ImportJobDefinitionInput);
  const name = field("job-name").value.trim();
  const country = field("phone-country").value.trim().toUpperCase();
  return {
    ...base,
    columns: chosenColumns().flatMap((c) => {
      const to = targetOf(c.key);
      if (to === null) return [];
      const transforms = c.key === c.suggestedKey ? c.suggestedTransforms : [...(usual[c.key] ?? [])];
      return [{ column: c.column, ...(c.occurrence ? { occurrence: c.occurrence } : {}), to, transforms }];
    }),
    target: { ...base.target, studyId: field("study").value.trim(), identifier: menu("identifier").value },
    ...(name ? { name } : {}),
    ...(country ? { phoneCountry: country } : {}),
  };
}

/** The mapping's buttons off while a request runs, and what it is doing. */
export function busy(on: boolean, message = ""): void {
  for (const id of ["preview-button", "dry-run-button", "run-button", "save-button"]) {
    button(id).disabled = on;
  }
  box("mapping-status").textContent = message;
}
