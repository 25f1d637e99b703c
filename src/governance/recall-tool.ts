import { z } from "zod";
import { NotFoundError } from "../errors/errors.ts";
import type { JsonValue } from "../model/message.ts";
import { validate } from "../model/schemas.ts";
import type { OffloadStore } from "./offload-store.ts";

/** The name of the tool that reads offloaded outputs back. */
export const RECALL_TOOL_NAME = "recall_tool_output";

const recallInputSchema = z.object({
  ref: z.string().min(1).describe("the reference shown in the offloaded output's notice"),
  offset: z.number().int().nonnegative().default(0).describe("first character to read"),
  limit: z.number().int().positive().max(100_000).default(8_000).describe("how many characters to read"),
});

/** Arguments of `recall_tool_output`. */
export type RecallToolInput = z.input<typeof recallInputSchema>;

/** The tool's JSON-schema definition, ready for any provider's tool list. */
export const recallToolDefinition = {
  name: RECALL_TOOL_NAME,
  description:
    "Read back a tool output (or a long tool-call argument) that was moved out of the conversation to save " +
    "context. " +
    "Pass the reference from the notice; page through long outputs with offset and limit (characters).",
  // As the model writes it: offset and limit may be left out (their defaults apply).
  inputSchema: z.toJSONSchema(recallInputSchema, { io: "input" }) as JsonValue,
} as const;

/**
 * Builds the `recall_tool_output` tool over an offload store: a definition plus an `execute` that returns the
 * requested slice with a header saying where it is in the whole output.
 *
 * @example
 * const recall = createRecallTool(store);
 * tools.push(recall.definition);
 * if (call.name === recall.definition.name) result = await recall.execute(call.input);
 */
export function createRecallTool(store: OffloadStore): {
  definition: typeof recallToolDefinition;
  execute(input: unknown): Promise<string>;
} {
  return {
    definition: recallToolDefinition,
    async execute(input) {
      const { ref, offset, limit } = validate(recallInputSchema, input, `${RECALL_TOOL_NAME} arguments`);
      const whole = await store.getText(ref);
      if (whole === undefined)
        throw new NotFoundError("offloaded output", ref, "check the reference in the notice");
      const slice = whole.slice(offset, offset + limit);
      const end = offset + slice.length;
      const more = end < whole.length ? `; call again with offset ${end} for more` : "";
      return `[characters ${offset}–${end} of ${whole.length}${more}]\n${slice}`;
    },
  };
}
