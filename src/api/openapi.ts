import { z } from "zod";
import { type Endpoint, endpoints } from "./endpoints.ts";

const ERROR_TEXT: Record<number, string> = {
  400: "Invalid request: JSON {errors:[{message,path}]} when schema validation fails, plain text for domain rules",
  401: "Unauthorized",
  403: "Forbidden",
  404: "{Resource} not found",
  409: "Study is not in draft status",
  429: "Too Many Requests",
  500: "Internal Server Error",
};

const RATE_HEADERS = {
  "X-RateLimit-Limit": { schema: { type: "integer" }, description: "Requests allowed in the window" },
  "X-RateLimit-Remaining": { schema: { type: "integer" }, description: "Requests left in the window" },
  "X-RateLimit-Reset": {
    schema: { type: "integer" },
    description: "When the window resets (unit: see docs/spec-decisions.md)",
  },
};

function schemaOf(s: z.ZodType, io: "input" | "output"): Record<string, unknown> {
  const json = z.toJSONSchema(s, { io, unrepresentable: "any" }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

function objectKeys(s: z.ZodType): string[] {
  const json = schemaOf(s, "input");
  const props = json.properties;
  return props && typeof props === "object" ? Object.keys(props) : [];
}

/** Builds the OpenAPI 3.1 document from the endpoint table. */
export function buildOpenApi(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const ep of Object.values(endpoints) as unknown as Endpoint[]) {
    const pathParams = objectKeys(ep.params).map((name) => ({
      name,
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const queryJson = schemaOf(ep.query, "input");
    const queryProps = (queryJson.properties ?? {}) as Record<string, unknown>;
    const queryParams = Object.entries(queryProps).map(([name, schema]) => ({
      name,
      in: "query",
      required: false,
      schema,
    }));
    const responses: Record<string, unknown> = {
      [String(ep.successStatus)]: {
        description: "Success",
        headers: RATE_HEADERS,
        content: { "application/json": { schema: schemaOf(ep.response, "output") } },
      },
    };
    for (const status of ep.errorStatuses) {
      const headers =
        status === 429
          ? {
              ...RATE_HEADERS,
              "Retry-After": { schema: { type: "string" }, description: "Seconds, or an HTTP date" },
            }
          : ep.rateLimitHeaderStatuses.includes(status)
            ? RATE_HEADERS
            : undefined;
      responses[String(status)] = {
        description: ERROR_TEXT[status] ?? "Error",
        ...(headers ? { headers } : {}),
        content:
          status === 400
            ? {
                "application/json": {
                  schema: {
                    type: "object",
                    required: ["errors"],
                    properties: {
                      errors: {
                        type: "array",
                        items: {
                          type: "object",
                          required: ["message", "path"],
                          properties: {
                            message: { type: "string" },
                            path: {
                              type: "array",
                              items: { anyOf: [{ type: "string" }, { type: "number" }] },
                            },
                          },
                        },
                      },
                    },
                  },
                },
                "text/plain": { schema: { type: "string" } },
              }
            : { "text/plain": { schema: { type: "string" } } },
      };
    }
    const operation: Record<string, unknown> = {
      operationId: ep.operationId,
      summary: ep.summary,
      description: `Spec section ${ep.specSection}.${ep.permissions.length ? ` Requires permissions: ${ep.permissions.join(", ")}.` : ""}`,
      ...(ep.deprecated ? { deprecated: true } : {}),
      parameters: [...pathParams, ...queryParams],
      ...(ep.body.type === "undefined"
        ? {}
        : {
            requestBody: {
              required: true,
              content: { "application/json": { schema: schemaOf(ep.body, "input") } },
            },
          }),
      responses,
      security: [{ bearer: [] }],
    };
    paths[ep.path] ??= {};
    (paths[ep.path] as Record<string, unknown>)[ep.method.toLowerCase()] = operation;
  }
  return {
    openapi: "3.1.0",
    info: { title: "Research recruitment service (public interface)", version: "1.0" },
    servers: [
      { url: "{baseUrl}", variables: { baseUrl: { default: "http://127.0.0.1:4010/api/public/v1" } } },
    ],
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    paths,
  };
}

/** The document as committed in docs/openapi.json. */
export function openApiText(): string {
  return `${JSON.stringify(buildOpenApi(), null, 2)}\n`;
}
