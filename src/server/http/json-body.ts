import type { Context } from "hono";
import type { z } from "zod";
import { validate } from "../../model/schemas.ts";
import { HttpError } from "./http-error.ts";

/**
 * Reads a JSON request body and validates it: 415 without `Content-Type: application/json` (a browser cannot
 * send that cross-site without a preflight the server never grants), 400 `invalid_json` for bad JSON, 400
 * `invalid_input` naming each bad field.
 *
 * @example
 * const { title } = await readJson(c, z.object({ title: z.string() }), "session update");
 */
export async function readJson<Schema extends z.ZodType>(
  c: Context,
  schema: Schema,
  what: string,
): Promise<z.output<Schema>> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/json\s*(;|$)/i.test(type)) {
    throw new HttpError(
      415,
      "unsupported_media_type",
      "send the body as JSON with Content-Type: application/json",
    );
  }
  let body: unknown;
  try {
    const text = await c.req.text();
    body = text.trim() === "" ? {} : JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new HttpError(400, "invalid_json", `the body is not valid JSON: ${error.message}`);
    throw error;
  }
  return validate(schema, body, what);
}
