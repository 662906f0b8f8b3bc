import { contactRules, fieldRule, type Preset } from "./preset.ts";

/** HubSpot "Export contacts" (CSV): dates as `YYYY-MM-DD HH:mm`, extra emails `;`-separated. */
export const hubspotPreset: Preset = {
  name: "hubspot",
  description: "HubSpot contacts export",
  rules: [
    ...contactRules(),
    fieldRule("phone", ["Phone Number", "Phone", "Telephone"]),
    fieldRule("additionalPhones", ["Mobile Phone Number", "Mobile Phone", "Mobile"]),
    fieldRule("additionalEmails", ["Additional email addresses", "Additional Emails", "Secondary Email"]),
    {
      to: "lastContactDate",
      headers: ["Last Contacted", "Last Contact Date", "Last Activity Date"],
      transforms: [
        { date: ["iso", "YYYY-MM-DD HH:mm", "YYYY-MM-DD HH:mm:ss", "MM/DD/YYYY", "MM/DD/YYYY HH:mm"] },
      ],
    },
  ],
};
