import { parseFullName } from "parse-full-name";

/**
 * A full name split (parse-full-name): "Dr. Jane Q. Smith Jr." → Jane Q. /
 * Smith Jr., "Smith, Jane" → Jane / Smith. Titles and nicknames are left out;
 * a middle name goes with the first; a single word is a first name.
 */
export function splitFullName(name: string): { first: string; last: string } {
  const parsed = parseFullName(name, "all", false, false, true);
  const first = [parsed.first, parsed.middle].filter((s) => s).join(" ");
  const last = [parsed.last, parsed.suffix].filter((s) => s).join(" ");
  return first === "" && !last.includes(" ") ? { first: last, last: "" } : { first, last };
}
