import { EMAIL_HEADERS, FIRST_NAME_HEADERS, LAST_NAME_HEADERS, type Preset } from "./preset.ts";

/** Mailchimp audience export (subscribed, unsubscribed or cleaned members). */
export const mailchimpPreset: Preset = {
  name: "mailchimp",
  description: "Mailchimp audience export",
  rules: [
    { to: "email", headers: EMAIL_HEADERS, transforms: ["lowercase"] },
    { to: "firstName", headers: [...FIRST_NAME_HEADERS, "FNAME"], transforms: [] },
    { to: "lastName", headers: [...LAST_NAME_HEADERS, "LNAME"], transforms: [] },
    { to: "phone", headers: ["Phone Number", "Phone", "PHONE"], transforms: ["phone"] },
  ],
};
