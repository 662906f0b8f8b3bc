import { contactRules, fieldRule, type Preset } from "./preset.ts";

/** Salesforce contact report exported as CSV ("Details only"); dates in the US locale. */
export const salesforcePreset: Preset = {
  name: "salesforce",
  description: "Salesforce contact report",
  rules: [
    ...contactRules(),
    fieldRule("phone", ["Phone", "Business Phone", "Phone Number"]),
    fieldRule("additionalPhones", ["Mobile", "Mobile Phone", "Home Phone", "Other Phone"]),
    fieldRule("additionalEmails", ["Secondary Email", "Other Email", "Alternate Email"]),
    {
      // The standard checkbox (API name HasOptedOutOfEmail): a report writes 0/1, Data Loader true/false.
      to: "isOptedOut",
      headers: ["Email Opt Out", "Email Opt-Out", "HasOptedOutOfEmail"],
      transforms: [{ boolean: { true: ["1", "true"], false: ["0", "false"] } }],
    },
    {
      to: "lastContactDate",
      headers: ["Last Activity", "Last Activity Date", "Last Contacted"],
      transforms: [{ date: ["M/D/YYYY", "M/D/YYYY h:mm A", "M/D/YYYY H:mm", "iso"] }],
    },
  ],
};
