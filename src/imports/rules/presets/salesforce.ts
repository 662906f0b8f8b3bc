import { EMAIL_HEADERS, FIRST_NAME_HEADERS, LAST_NAME_HEADERS, type Preset } from "./preset.ts";

/** Salesforce contact report exported as CSV ("Details only"); dates in the US locale. */
export const salesforcePreset: Preset = {
  name: "salesforce",
  description: "Salesforce contact report",
  rules: [
    { to: "email", headers: EMAIL_HEADERS, transforms: ["lowercase"] },
    { to: "firstName", headers: FIRST_NAME_HEADERS, transforms: [] },
    { to: "lastName", headers: LAST_NAME_HEADERS, transforms: [] },
    { to: "phone", headers: ["Phone", "Business Phone", "Phone Number"], transforms: ["phone"] },
    {
      to: "additionalPhones",
      headers: ["Mobile", "Mobile Phone", "Home Phone", "Other Phone"],
      transforms: ["split", "phone"],
    },
    {
      to: "additionalEmails",
      headers: ["Secondary Email", "Other Email", "Alternate Email"],
      transforms: ["split", "lowercase"],
    },
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
