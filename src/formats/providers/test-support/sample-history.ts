import type { Message, ReasoningBlock } from "../../../model/message.ts";
import { buildMessages, type MessageDraft } from "../message-builder.ts";
import { fixedImportOptions } from "./history-arbitrary.ts";

const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const PDF = "JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PD4+CmVuZG9iagp0cmFpbGVyCjw8Pj4KJSVFT0YK";

/** What differs between formats in the sample history. */
export interface SampleOptions {
  /** Reasoning blocks of the first assistant message. */
  readonly reasoning: readonly ReasoningBlock[];
  /** Include a file name on files (Gemini has no place for one). Default true. */
  readonly filenames?: boolean;
}

/**
 * A realistic history touching every feature the converters handle: a system prompt, a multi-part user message
 * with base64 and URL images and a PDF, reasoning, two parallel tool calls (one failing, one returning JSON
 * with a screenshot), a summary, a marker and a final answer.
 *
 * @example
 * expect(fromAnthropic(toAnthropic(sampleHistory(options)), fixedImportOptions())).toEqual(…);
 */
export function sampleHistory(options: SampleOptions): Message[] {
  const named = options.filenames === false ? {} : { filename: "report.pdf" };
  const drafts: MessageDraft[] = [
    { role: "system", content: [{ type: "text", text: "You are a careful coding agent." }] },
    {
      role: "user",
      content: [
        { type: "text", text: "Compare these two screenshots and the report." },
        { type: "image", mediaType: "image/png", data: PNG },
        { type: "image", mediaType: "image/jpeg", url: "https://example.com/shots/after.jpg" },
        { type: "file", mediaType: "application/pdf", data: PDF, ...named },
      ],
    },
    {
      role: "assistant",
      content: [
        ...options.reasoning,
        { type: "text", text: "I will check the build and the page." },
        { type: "tool-call", id: "call_build", name: "bash", input: { command: "npm run build" } },
        {
          type: "tool-call",
          id: "call_page",
          name: "screenshot",
          input: { url: "http://localhost:3000", full: true },
        },
      ],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          callId: "call_build",
          toolName: "bash",
          content: "src/app.ts(3,1): error TS2304: Cannot find name 'x'.",
          isError: true,
        },
      ],
    },
    {
      role: "tool",
      content: [
        {
          type: "tool-result",
          callId: "call_page",
          toolName: "screenshot",
          content: { status: 200, title: "Home", links: ["/a", "/b"] },
          attachments: [{ type: "image", mediaType: "image/png", data: PNG }],
        },
      ],
    },
    { role: "assistant", content: [{ type: "text", text: "The build fails on src/app.ts line 3." }] },
    { role: "user", kind: "marker", content: [{ type: "text", text: "compaction boundary" }] },
    {
      role: "user",
      kind: "summary",
      content: [{ type: "text", text: "[Summary of 6 earlier messages]\nThe build fails in src/app.ts." }],
    },
    { role: "user", content: [{ type: "text", text: "Fix it." }] },
    { role: "assistant", content: [{ type: "text", text: "Fixed: declared x." }] },
  ];
  return buildMessages(drafts, fixedImportOptions());
}

/** The sample history as it comes back from a provider: the same, without the marker (never sent). */
export function withoutMarkers(messages: readonly Message[]): Message[] {
  return buildMessages(
    messages
      .filter((message) => message.kind !== "marker")
      .map(({ role, content, kind, metadata }) => ({
        role,
        content,
        ...(kind !== undefined && { kind }),
        ...(metadata !== undefined && { metadata }),
      })),
    fixedImportOptions(),
  );
}

/**
 * Messages as a provider's importer gives them back: every signed reasoning block marked as that provider's
 * (`signedBy`), since the signature came from it.
 */
export function signedBy(messages: readonly Message[], provider: "anthropic" | "google"): Message[] {
  return messages.map((message) => ({
    ...message,
    content: message.content.map((block) =>
      block.type === "reasoning" && block.signature !== undefined && block.signedBy === undefined
        ? { ...block, signedBy: provider }
        : block,
    ),
  }));
}
