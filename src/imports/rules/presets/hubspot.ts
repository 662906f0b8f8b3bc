import { EMAIL_HEADERS, FIRST_NAME_HEADERS, LAST_NAME_HEADERS, type Preset } from "./preset.ts";

/** HubSpot "Export contacts" (CSV): dates as `YYYY-MM-DD HH:mm`, extra emails `;`-separated. */
export const hubspotPreset: Preset = {
  name: "hubspot",
  description: "HubSpot contacts export",
  rules: [
    { to: "email", headers: EMAIL_HEADERS, transforms: ["lowercase"] },
    { to: "firstName", headers: FIRST_NAME_HEADERS, transforms: [] },
    { to: "lastName", headers: LAST_NAME_HEADERS, transforms: [] },
    { to: "phone", headers: ["Phone Number", "Phone", "Telephone"], transforms: ["phone"] },
    {
      to: "additionalPhones",
      headers: ["Mobile Phone Number", "Mobile Phone", "Mobile"],
      transforms: ["split", "phone"],
    },
    {
      to: "additionalEmails",
      headers: ["Additional email addresses", "Additional Emails", "Secondary Email"],
      transforms: ["split", "lowercase"],
    },
    {
      to: "lastContactDate",
      headers: ["Last Contacted", "Last Contact Date", "Last Activity Date"],
      transforms: [
        { date: ["iso", "YYYY-MM-DD HH:mm", "YYYY-MM-DD HH:mm:ss", "MM/DD/YYYY", "MM/DD/YYYY HH:mm"] },
      ],
    },
  ],
};
