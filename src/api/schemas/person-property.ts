import { z } from "zod";
import { SPEC_DEFAULTS } from "../decisions.ts";
import { Id, ValidationErrorItem } from "./common.ts";

/** Person property (spec 2.7). propertyType and colours beyond those shown are open. */
export const PersonProperty = z.looseObject({
  propertyId: Id.describe("The person property."),
  name: z.string().describe("The property's name as people see it."),
  propertyType: z
    .string()
    .describe("Its kind: SINGLE_SELECT, STRING, DATETIME appear; the spec lists no full set."),
  propertyOptions: z
    .array(
      z.looseObject({
        propertyOptionId: Id,
        name: z.string(),
        color: z.string().optional(),
        order: z.string().optional(),
      }),
    )
    .optional()
    .describe("The choices of a select property: [{propertyOptionId, name, color, order}]."),
  isUnique: z.boolean().describe("Whether no two people may hold the same value."),
  isPHI: z.boolean().optional().describe("Whether the property holds protected health information."),
  isPII: z.boolean().optional().describe("Whether the property holds personally identifying information."),
  description: z.string().optional().describe("The property's description."),
  propertyGroupId: z
    .string()
    .optional()
    .describe("The property group it was exported from (the group the export job names)."),
});
export type PersonProperty = z.infer<typeof PersonProperty>;

/** POST /properties/delete (spec 4.8). */
export const DeletePropertiesBody = z.object({ propertyIds: z.array(z.string()) }).strict();
export type DeletePropertiesBody = z.infer<typeof DeletePropertiesBody>;
export const DeletePropertiesResult = z.looseObject({
  deleted: z.array(z.string()),
  errors: z.array(ValidationErrorItem),
});
export type DeletePropertiesResult = z.infer<typeof DeletePropertiesResult>;

/** Query of GET /property-groups/{id}/properties; names are ours (see SPEC_DEFAULTS). */
export const PropertyGroupQuery = z.object({
  [SPEC_DEFAULTS.propertyGroupCursorParam]: z.string().optional(),
  [SPEC_DEFAULTS.propertyGroupPageSizeParam]: z.coerce
    .number()
    .int()
    .min(1)
    .max(SPEC_DEFAULTS.maxPropertyGroupPageSize)
    .optional(),
});
export type PropertyGroupQuery = z.infer<typeof PropertyGroupQuery>;
