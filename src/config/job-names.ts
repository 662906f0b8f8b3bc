/**
 * Names that job definitions accept and the CLI's help text lists, in a module
 * without zod or any other import, so that `recruit-sync --help` can show them
 * without loading the schemas. import-job.ts and export-job.ts re-export them.
 */

/** How a file's bytes are read: `auto` detects it (docs/imports.md, "Encodings"). */
export const ENCODINGS = ["auto", "utf-8", "utf-16le", "utf-16be", "windows-1252", "latin1"] as const;

/** CRM exports whose standard columns an import can map by header. */
export const PRESET_NAMES = ["hubspot", "salesforce", "mailchimp"] as const;

/** Exported resources, named like their warehouse tables, in the order a run loads them. */
export const EXPORT_RESOURCES = [
  "participants",
  "email_messages",
  "incentives",
  "custom_incentives",
  "segments",
  "person_properties",
] as const;
