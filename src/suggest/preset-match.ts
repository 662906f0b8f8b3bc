import { LIST_FIELDS, type PersonField, type PresetName } from "../config/import-job.ts";
import { normalizeHeader, PRESETS, type PresetRule } from "../imports/index.ts";

/**
 * Headers only one CRM's export writes: their presence names the preset.
 * The columns a preset maps (Email, First Name) are written by all of them
 * and say nothing.
 */
const SIGNATURES: Record<PresetName, readonly string[]> = {
  hubspot: [
    "Record ID",
    "Lifecycle Stage",
    "Lead Status",
    "Create Date",
    "Last Contacted",
    "Associated Company",
    "HubSpot Score",
    "Original Source",
    "Mobile Phone Number",
    "Additional email addresses",
    "Marketing contact status",
  ],
  salesforce: [
    "Contact ID",
    "Account Name",
    "Account ID",
    "Mailing Street",
    "Mailing City",
    "Mailing State/Province",
    "Mailing Zip/Postal Code",
    "Mailing Country",
    "Email Opt Out",
    "HasOptedOutOfEmail",
    "Lead Source",
    "Salutation",
    "Last Activity",
  ],
  mailchimp: [
    "MEMBER_RATING",
    "OPTIN_TIME",
    "OPTIN_IP",
    "CONFIRM_TIME",
    "CONFIRM_IP",
    "GMTOFF",
    "DSTOFF",
    "LAST_CHANGED",
    "LEID",
    "EUID",
    "FNAME",
    "LNAME",
  ],
};

/** The preset whose signature headers the file has most of: two at least, and more than any other's. */
export function detectPreset(headers: readonly string[]): PresetName | undefined {
  const present = new Set(headers.map(normalizeHeader));
  const scores = (Object.keys(SIGNATURES) as PresetName[])
    .map((name) => ({ name, score: SIGNATURES[name].filter((h) => present.has(normalizeHeader(h))).length }))
    .sort((a, b) => b.score - a.score);
  const [best, next] = scores;
  if (!best || best.score < 2 || (next && next.score === best.score)) return undefined;
  return best.name;
}

export interface PresetColumn {
  index: number;
  rule: PresetRule;
}

/**
 * The columns a preset takes, as the import's column plan takes them: a
 * scalar field its first synonym present, a list field every one.
 * Repeated headers are left out (the run would refuse them).
 */
export function presetColumns(preset: PresetName, headers: readonly string[]): PresetColumn[] {
  const byName = new Map<string, number[]>();
  headers.forEach((h, i) => {
    const key = normalizeHeader(h);
    byName.set(key, [...(byName.get(key) ?? []), i]);
  });
  const out: PresetColumn[] = [];
  const used = new Set<number>();
  for (const rule of PRESETS[preset].rules) {
    const isList = typeof rule.to === "string" && LIST_FIELDS.includes(rule.to as PersonField);
    for (const name of rule.headers) {
      const found = byName.get(normalizeHeader(name));
      const index = found?.length === 1 ? found[0] : undefined;
      if (index === undefined || used.has(index)) continue;
      used.add(index);
      out.push({ index, rule });
      if (!isList) break;
    }
  }
  return out;
}
