import type { Context } from "hono";
import type { z } from "zod";
import { MAX_JSON_DEPTH, validate } from "../../model/schemas.ts";
import { HttpError } from "./http-error.ts";
import { deepestNesting, hasOnlyWellFormedText } from "./json-nesting.ts";

/** Refuses bytes that are not UTF-8 instead of replacing them with U+FFFD. */
const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads a JSON request body and validates it: 415 without `Content-Type: application/json` (a browser cannot
 * send that cross-site without a preflight the server never grants), 400 `invalid_json` for bad JSON or bytes
 * that are not UTF-8 (never read with U+FFFD in their place), 400 `invalid_input` for JSON nested deeper than
 * `MAX_JSON_DEPTH` (strings holding JSON included: see `deepestNesting`) and naming each bad field.
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
  let text: string;
  try {
    text = utf8.decode(await c.req.arrayBuffer());
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    throw new HttpError(
      400,
      "invalid_json",
      "the body is not valid UTF-8; send JSON text encoded in UTF-8 (nothing of it was read)",
    );
  }
  if (deepestNesting(text) > MAX_JSON_DEPTH) {
    throw new HttpError(
      400,
      "invalid_input",
      `the body nests deeper than ${MAX_JSON_DEPTH} levels (JSON held in a string, such as tool call ` +
        "arguments or a tool result, counts too); flatten it",
    );
  }
  let body: unknown;
  try {
    body = text.trim() === "" ? {} : JSON.parse(text);
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new HttpError(400, "invalid_json", `the body is not valid JSON: ${error.message}`);
    throw error;
  }
  if (!hasOnlyWellFormedText(body)) {
    throw new HttpError(
      400,
      "invalid_json",
      "the body holds text that is not valid Unicode (an unpaired surrogate escape such as \\ud800); send " +
        "well-formed text (nothing of it was read)",
    );
  }
  return validate(schema, body, what);
}
