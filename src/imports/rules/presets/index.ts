import type { PresetName } from "../../../config/import-job.ts";
import { hubspotPreset } from "./hubspot.ts";
import { mailchimpPreset } from "./mailchimp.ts";
import type { Preset } from "./preset.ts";
import { salesforcePreset } from "./salesforce.ts";

export type { Preset, PresetRule } from "./preset.ts";

export const PRESETS: Readonly<Record<PresetName, Preset>> = {
  hubspot: hubspotPreset,
  salesforce: salesforcePreset,
  mailchimp: mailchimpPreset,
};
