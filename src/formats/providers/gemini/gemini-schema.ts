import { z } from "zod";
import { jsonObjectSchema } from "../../../model/schemas.ts";

const signature = { thoughtSignature: z.string().optional() };
const inlineData = z.object({
  inlineData: z.object({ mimeType: z.string().min(1), data: z.string() }),
  ...signature,
});
const fileData = z.object({
  fileData: z.object({ mimeType: z.string().min(1).optional(), fileUri: z.string().min(1) }),
  ...signature,
});
const text = z.object({ text: z.string(), thought: z.boolean().optional(), ...signature });
const jsonObject = jsonObjectSchema;

const functionCall = z.object({
  functionCall: z.object({ name: z.string().min(1), args: jsonObject.optional(), id: z.string().optional() }),
  ...signature,
});

const functionResponse = z.object({
  functionResponse: z.object({
    name: z.string(),
    response: jsonObject,
    id: z.string().optional(),
    parts: z.array(z.union([inlineData, fileData])).optional(),
  }),
});

/** Schema of the Gemini payload `fromGemini` accepts (other request fields are ignored). */
export const geminiPayloadSchema = z.object({
  systemInstruction: z.object({ parts: z.array(text) }).optional(),
  contents: z.array(
    z.discriminatedUnion("role", [
      z.object({
        // `function` is the role older APIs used for function responses.
        role: z.enum(["user", "function"]),
        parts: z.array(z.union([text, inlineData, fileData, functionResponse])),
      }),
      z.object({
        role: z.literal("model"),
        parts: z.array(z.union([text, inlineData, fileData, functionCall])),
      }),
    ]),
  ),
});

/** A validated Gemini payload. */
export type ParsedGeminiPayload = z.output<typeof geminiPayloadSchema>;
