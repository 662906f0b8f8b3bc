import { z } from "zod";
import { SPEC_DEFAULTS } from "../decisions.ts";
import { Id, ValidationErrorItem } from "./common.ts";

/** Person property (spec 2.7). propertyType and colours beyond those shown are open. */
export const PersonProperty = z.looseObject({
  propertyId: Id,
  name: z.string(),
  propertyType: z.string(),
  propertyOptions: z
    .array(
      z.looseObject({
        propertyOptionId: Id,
        name: z.string(),
        color: z.string().optional(),
        order: z.string().optional(),
      }),
    )
    .optional(),
  isUnique: z.boolean(),
  isPHI: z.boolean().optional(),
  isPII: z.boolean().optional(),
  description: z.string().optional(),
  propertyGroupId: z.string().optional(),
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
