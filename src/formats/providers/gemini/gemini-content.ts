import type { JsonValue } from "../../../model/message.ts";

/** Inline base64 bytes. */
export interface GeminiBlob {
  mimeType: string;
  data: string;
}

/** Bytes at a URI (a Files API URI, `gs://…` or `https://…`). */
export interface GeminiFileData {
  mimeType: string;
  fileUri: string;
}

/** A text part; `thought: true` marks reasoning. `thoughtSignature` may sign any part of a model turn. */
export interface GeminiTextPart {
  text: string;
  thought?: boolean;
  thoughtSignature?: string;
}

/** An inline media part. */
export interface GeminiInlineDataPart {
  inlineData: GeminiBlob;
  thoughtSignature?: string;
}

/** A media part by URI. */
export interface GeminiFileDataPart {
  fileData: GeminiFileData;
  thoughtSignature?: string;
}

/** A function call; `id` is optional (older APIs have none). */
export interface GeminiFunctionCallPart {
  functionCall: { name: string; args: { [key: string]: JsonValue }; id?: string };
  thoughtSignature?: string;
}

/** A function's result; `response` is an object (`{ output }` or `{ error }` by convention), `parts` its media. */
export interface GeminiFunctionResponsePart {
  functionResponse: {
    name: string;
    response: { [key: string]: JsonValue };
    id?: string;
    parts?: (GeminiInlineDataPart | GeminiFileDataPart)[];
  };
}

/** Any part. */
export type GeminiPart =
  | GeminiTextPart
  | GeminiInlineDataPart
  | GeminiFileDataPart
  | GeminiFunctionCallPart
  | GeminiFunctionResponsePart;

/** One turn of the conversation. */
export interface GeminiContent {
  role: "user" | "model";
  parts: GeminiPart[];
}

/** The conversation part of a `generateContent` request. */
export interface GeminiPayload {
  systemInstruction?: { parts: GeminiTextPart[] };
  contents: GeminiContent[];
}
