import { contactRules, fieldRule, type Preset } from "./preset.ts";

/** Mailchimp audience export (subscribed, unsubscribed or cleaned members). */
export const mailchimpPreset: Preset = {
  name: "mailchimp",
  description: "Mailchimp audience export",
  rules: [
    ...contactRules({ firstName: ["FNAME"], lastName: ["LNAME"] }),
    fieldRule("phone", ["Phone Number", "Phone", "PHONE"]),
  ],
};
