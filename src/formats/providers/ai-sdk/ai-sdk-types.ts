import type { FilePart, TextPart, ToolResultPart } from "ai";

/** The AI SDK's provider options (`{ [provider]: { … } }`), derived from the types `ai` exports. */
export type ProviderOptions = NonNullable<TextPart["providerOptions"]>;

/** A tool result's `output` union. */
export type ToolResultOutput = ToolResultPart["output"];

/** Tagged file data (`{ type: "data" | "url" | "reference", … }`). */
export type TaggedFileData = Extract<FilePart["data"], { type: "data" | "url" | "reference" }>;
