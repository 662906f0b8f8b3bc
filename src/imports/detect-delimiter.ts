import type { SourceOptions } from "../config/import-job.ts";

export type Delimiter = "," | ";" | "\t" | "|";
const CANDIDATES: Delimiter[] = [",", ";", "\t", "|"];

/** Counts each candidate per line, outside quotes. */
function countsPerLine(text: string, maxLines: number): Map<Delimiter, number[]> {
  const counts = new Map<Delimiter, number[]>(CANDIDATES.map((c) => [c, []]));
  let current = new Map<Delimiter, number>(CANDIDATES.map((c) => [c, 0]));
  let inQuotes = false;
  let lines = 0;
  const finishLine = () => {
    for (const c of CANDIDATES) counts.get(c)?.push(current.get(c) ?? 0);
    current = new Map(CANDIDATES.map((c) => [c, 0]));
    lines++;
  };
  for (let i = 0; i < text.length && lines < maxLines; i++) {
    const ch = text[i];
    if (ch === '"') inQuotes = !inQuotes;
    else if (!inQuotes && (ch === "\n" || ch === "\r")) {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      finishLine();
    } else if (!inQuotes && (ch === "," || ch === ";" || ch === "\t" || ch === "|")) {
      current.set(ch, (current.get(ch) ?? 0) + 1);
    }
  }
  // A last line cut off by the end of the sample would skew the counts: keep it only if it is all we have.
  if (lines === 0) finishLine();
  return counts;
}

/**
 * The delimiter that splits the header into the most columns and the data
 * lines consistently with it. Ties go to the comma.
 */
export function detectDelimiter(sample: string, requested: SourceOptions["delimiter"] = "auto"): Delimiter {
  if (requested === "tab") return "\t";
  if (requested !== "auto") return requested;
  const counts = countsPerLine(sample, 50);
  let best: Delimiter = ",";
  let bestScore = 0;
  for (const c of CANDIDATES) {
    const perLine = (counts.get(c) ?? []).filter((_n, i, all) => i < all.length);
    const header = perLine[0] ?? 0;
    if (header === 0) continue;
    const consistent = perLine.filter((n) => n === header).length / perLine.length;
    const score = consistent * 1000 + header;
    if (score > bestScore) {
      bestScore = score;
      best = c;
    }
  }
  return best;
}
