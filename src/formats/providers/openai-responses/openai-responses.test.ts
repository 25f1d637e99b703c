import fc from "fast-check";
import type { ResponseInputItem } from "openai/resources/responses/responses";
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../../errors/errors.ts";
import type { Message } from "../../../model/message.ts";
import { buildMessages } from "../message-builder.ts";
import {
  fixedImportOptions,
  historyArbitrary,
  openAIReasoning,
  sampleHistory,
  storedForm,
  withoutMarkers,
} from "../test-support/index.ts";
import { createEstimatingCounter } from "../../../tokens/estimating-counter.ts";
import { toOpenAIChat } from "../openai-chat/index.ts";
import { fromOpenAIResponses } from "./from-openai-responses.ts";
import type {
  ResponsesCustomToolCall,
  ResponsesFunctionCall,
  ResponsesFunctionCallOutput,
  ResponsesInputMessage,
} from "./openai-responses-item.ts";
import { toOpenAIResponses } from "./to-openai-responses.ts";

const reasoning = [
  {
    type: "reasoning",
    text: "**Plan**",
    providerData: { openai: { itemId: "rs_1", reasoningEncryptedContent: "gAAAA1" } },
  },
  {
    type: "reasoning",
    text: "**Check build**",
    providerData: { openai: { itemId: "rs_1", reasoningEncryptedContent: "gAAAA1" } },
  },
] as const;

function roundTrip(messages: readonly Message[]): Message[] {
  return fromOpenAIResponses(toOpenAIResponses(messages), fixedImportOptions());
}

describe("OpenAI Responses", () => {
  it("round-trips a history with every feature, dropping only the marker", () => {
    const history = sampleHistory({ reasoning });
    expect(roundTrip(history)).toEqual(withoutMarkers(history));
  });

  it("merges the reasoning blocks of one item and puts tool attachments in the output list", () => {
    const items = toOpenAIResponses(sampleHistory({ reasoning }));
    expect(items[2]).toEqual({
      type: "reasoning",
      id: "rs_1",
      summary: [
        { type: "summary_text", text: "**Plan**" },
        { type: "summary_text", text: "**Check build**" },
      ],
      encrypted_content: "gAAAA1",
    });
    expect(items.slice(4, 8).map((item) => item.type)).toEqual([
      "function_call",
      "function_call",
      "function_call_output",
      "function_call_output",
    ]);
    expect(items[6]).toEqual({
      type: "function_call_output",
      call_id: "call_build",
      output: "[tool error] src/app.ts(3,1): error TS2304: Cannot find name 'x'.",
    });
    expect(items[7]).toMatchObject({
      output: [
        { type: "input_text", text: '{"status":200,"title":"Home","links":["/a","/b"]}' },
        { type: "input_image", image_url: expect.stringMatching(/^data:image\/png;base64,/) },
      ],
    });
  });

  it("leaves out reasoning that OpenAI did not produce", () => {
    const history = sampleHistory({
      reasoning: [{ type: "reasoning", text: "from Claude", signature: "sig" }],
    });
    expect(toOpenAIResponses(history).some((item) => item.type === "reasoning")).toBe(false);
  });

  it("keeps a realistic payload, echoed output items included, stable through ctxkit", () => {
    const payload: ResponseInputItem[] = [
      { type: "message", role: "developer", content: "Talk like a pirate." },
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_text", text: "Summarise this file and fetch the weather." },
          { type: "input_file", file_id: "file-6F2ksmvXxt4VdoqmHRw6kL", filename: "draft.pdf" },
        ],
      },
      {
        type: "reasoning",
        id: "rs_68a1",
        summary: [{ type: "summary_text", text: "**Reading the draft**" }],
        encrypted_content: "gAAAAABoqZ",
        status: "completed",
      },
      {
        type: "message",
        id: "msg_68a2",
        role: "assistant",
        status: "completed",
        phase: "commentary",
        content: [{ type: "output_text", text: "Looking it up.", annotations: [] }],
      },
      {
        type: "function_call",
        id: "fc_68a3",
        call_id: "call_Xy1",
        name: "get_weather",
        arguments: '{"city": "Bristol"}',
        status: "completed",
      },
      { type: "custom_tool_call", id: "ctc_68a4", call_id: "call_Xy2", name: "shell", input: "ls -la" },
      { type: "function_call_output", call_id: "call_Xy1", output: '{"temp":14}' },
      {
        type: "custom_tool_call_output",
        call_id: "call_Xy2",
        output: [
          { type: "input_text", text: "[tool error] permission denied" },
          { type: "input_image", detail: "auto", image_url: "https://example.com/terminal.png" },
        ],
      },
      {
        type: "message",
        id: "msg_68a5",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Arr, 14 degrees.", annotations: [] }],
      },
    ];
    const messages = fromOpenAIResponses(payload, fixedImportOptions());
    expect(messages.map((message) => message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
    ]);
    expect(messages[3]!.content[0]).toEqual({
      type: "tool-result",
      callId: "call_Xy1",
      toolName: "get_weather",
      content: { temp: 14 },
    });
    expect(messages[4]!.content[0]).toMatchObject({ content: "permission denied", isError: true });
    expect(messages[2]!.content[0]).toEqual({
      type: "reasoning",
      text: "**Reading the draft**",
      providerData: {
        openai: { status: "completed", itemId: "rs_68a1", reasoningEncryptedContent: "gAAAAABoqZ" },
      },
    });
    expect(toOpenAIResponses(messages)).toEqual(payload);
  });

  it("keeps image detail levels, in messages and in tool outputs, through ctxkit and its store", () => {
    const payload: ResponseInputItem[] = [
      {
        type: "message",
        role: "user",
        content: [
          { type: "input_image", detail: "low", image_url: "https://example.com/a.png" },
          { type: "input_image", detail: "high", image_url: "data:image/png;base64,iVBORw0KGgo=" },
          { type: "input_image", detail: "original", file_id: "file-1" },
          { type: "input_image", detail: "auto", image_url: "https://example.com/b.png" },
        ],
      },
      { type: "function_call", call_id: "c1", name: "shot", arguments: "{}" },
      {
        type: "function_call_output",
        call_id: "c1",
        output: [
          { type: "input_text", text: "taken" },
          { type: "input_image", detail: "low", image_url: "https://example.com/shot.png" },
        ],
      },
    ];
    const messages = fromOpenAIResponses(payload, fixedImportOptions());
    expect(messages[0]!.content[0]).toMatchObject({ type: "image", detail: "low" });
    expect(toOpenAIResponses(messages)).toEqual(payload);
    expect(toOpenAIResponses(storedForm(messages))).toEqual(payload);
  });

  it("keeps tool outputs' parts as they were: order, text parts and list form", () => {
    const image = {
      type: "input_image" as const,
      detail: "auto" as const,
      image_url: "https://x.test/a.png",
    };
    const outputs: ResponsesFunctionCallOutput["output"][] = [
      [image, { type: "input_text", text: "the page" }],
      [{ type: "input_text", text: "before" }, image, { type: "input_text", text: "after" }, image],
      [
        { type: "input_text", text: "one" },
        { type: "input_text", text: "two" },
      ],
      [{ type: "input_text", text: "a list of one" }],
      "a string",
    ];
    const payload: ResponseInputItem[] = [
      ...outputs.map((_, at) => ({
        type: "function_call" as const,
        call_id: `c${at}`,
        name: "f",
        arguments: "{}",
      })),
      ...outputs.map((output, at) => ({ type: "function_call_output" as const, call_id: `c${at}`, output })),
    ] as ResponseInputItem[];
    const messages = fromOpenAIResponses(payload, fixedImportOptions());
    expect(messages[1]!.content[0]).toMatchObject({ content: "the page", attachments: [{ type: "image" }] });
    expect(toOpenAIResponses(messages)).toEqual(payload);
    expect(toOpenAIResponses(storedForm(messages))).toEqual(payload);
  });

  it("sends a message's list of one text part back as a list, not a string", () => {
    const payload: ResponseInputItem[] = [
      { type: "message", role: "developer", content: [{ type: "input_text", text: "Be brief." }] },
      { type: "message", role: "system", content: [{ type: "input_text", text: "Metric units." }] },
      { type: "message", role: "user", content: [{ type: "input_text", text: "Weather?" }] },
      { type: "message", role: "user", content: "And tomorrow?" },
    ];
    const messages = fromOpenAIResponses(payload, fixedImportOptions());
    expect(toOpenAIResponses(messages)).toEqual(payload);
    expect(toOpenAIResponses(storedForm(messages))).toEqual(payload);
  });

  it("keeps reasoning items without an id and multi-part assistant messages as single items", () => {
    const payload = [
      { type: "message", role: "user", content: "Plan it." },
      {
        type: "reasoning",
        summary: [
          { type: "summary_text", text: "**Plan**" },
          { type: "summary_text", text: "**Check**" },
        ],
        encrypted_content: "gAAAA1",
      },
      { type: "reasoning", summary: [], encrypted_content: "gAAAA2" },
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [
          { type: "output_text", text: "First part.", annotations: [] },
          { type: "output_text", text: "Second part.", annotations: [] },
        ],
      },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "Alone.", annotations: [] }],
      },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      {
        type: "message",
        role: "assistant",
        content: [
          { type: "output_text", text: "A", annotations: [] },
          { type: "output_text", text: "B", annotations: [] },
          { type: "output_text", text: "C", annotations: [] },
        ],
      },
    ] as ResponseInputItem[];
    const messages = fromOpenAIResponses(payload, fixedImportOptions());
    expect(messages[1]!.content.filter((block) => block.type === "text")).toHaveLength(6);
    expect(toOpenAIResponses(messages)).toEqual(payload);
    expect(toOpenAIResponses(storedForm(messages))).toEqual(payload);
  });

  it("keeps refusals and output text annotations", () => {
    const citation = {
      type: "url_citation",
      start_index: 0,
      end_index: 5,
      url: "https://example.com/",
      title: "Example",
    };
    const payload = [
      { type: "message", role: "user", content: "Cite, then refuse." },
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [
          { type: "output_text", text: "Cited.", annotations: [citation], logprobs: [] },
          { type: "refusal", refusal: "I can't help with the rest." },
        ],
      },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "refusal", refusal: "No." }],
      },
    ] as ResponseInputItem[];
    const messages = fromOpenAIResponses(payload, fixedImportOptions());
    expect(messages[1]!.content).toEqual([
      { type: "text", text: "Cited." },
      { type: "text", text: "I can't help with the rest.", refusal: true },
      { type: "text", text: "No.", refusal: true },
    ]);
    expect(toOpenAIResponses(messages)).toEqual(payload);
    expect(toOpenAIResponses(storedForm(messages))).toEqual(payload);
  });

  it("produces message, call and output items the official OpenAI SDK types accept", () => {
    const history = buildMessages(
      [
        { role: "user", content: [{ type: "text", text: "hi" }] },
        {
          role: "assistant",
          content: [
            { type: "tool-call", id: "c1", name: "ls", input: {} },
            { type: "tool-call", id: "c2", name: "shell", input: "pwd" },
          ],
        },
        { role: "tool", content: [{ type: "tool-result", callId: "c1", toolName: "ls", content: "a" }] },
        { role: "tool", content: [{ type: "tool-result", callId: "c2", toolName: "shell", content: "/" }] },
      ],
      fixedImportOptions(),
    );
    const [message, call, custom, output, customOutput] = toOpenAIResponses(history);
    // Compile-time check: each of our item types is assignable to the SDK's input item type. (Reasoning items
    // without an id and assistant messages without id/status go beyond the SDK's types; the API accepts them.)
    const typed: ResponseInputItem[] = [
      message as ResponsesInputMessage,
      call as ResponsesFunctionCall,
      custom as ResponsesCustomToolCall,
      output as ResponsesFunctionCallOutput,
      customOutput as ResponsesFunctionCallOutput,
    ];
    expect(typed).toEqual([
      { type: "message", role: "user", content: "hi" },
      { type: "function_call", call_id: "c1", name: "ls", arguments: "{}" },
      { type: "custom_tool_call", call_id: "c2", name: "shell", input: "pwd" },
      { type: "function_call_output", call_id: "c1", output: "a" },
      { type: "custom_tool_call_output", call_id: "c2", output: "/" },
    ]);
  });

  it("rejects bad input with a ValidationError naming the index and field", () => {
    const bad = [
      { role: "user", content: "hi" },
      { type: "function_call", call_id: "c1", name: "f", arguments: 3 },
    ];
    expect(() => fromOpenAIResponses(bad)).toThrow(ValidationError);
    expect(() => fromOpenAIResponses(bad)).toThrow(/input\[1\]\.arguments/);
  });

  it("round-trips random valid histories", () => {
    fc.assert(
      fc.property(
        historyArbitrary({
          reasoning: openAIReasoning,
          stringToolInputs: true,
          imageDetails: ["low", "high", "original"],
          refusals: true,
        }),
        (history) => {
          expect(roundTrip(history)).toEqual(history);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("keeps the items it does not model (built-in tools' calls and outputs, item references) as sent, in place", () => {
    const payload = [
      { type: "message", role: "user", content: "Find it, run it, show me." },
      { type: "web_search_call", id: "ws_1", status: "completed", action: { type: "search", query: "q" } },
      { type: "file_search_call", id: "fs_1", status: "completed", queries: ["q"], results: null },
      {
        type: "reasoning",
        id: "rs_1",
        summary: [{ type: "summary_text", text: "**Run**" }],
        encrypted_content: "gAAAA1",
      },
      {
        type: "local_shell_call",
        id: "lsc_1",
        call_id: "call_s",
        status: "completed",
        action: { type: "exec", command: ["ls"], env: {} },
      },
      { type: "local_shell_call_output", id: "lsco_1", output: "a.txt" },
      { type: "mcp_list_tools", id: "mcpl_1", server_label: "docs", tools: [] },
      { type: "mcp_approval_request", id: "mcpr_1", server_label: "docs", name: "read", arguments: "{}" },
      { type: "mcp_approval_response", approval_request_id: "mcpr_1", approve: true },
      { type: "mcp_call", id: "mcp_1", server_label: "docs", name: "read", arguments: "{}", output: "text" },
      { type: "image_generation_call", id: "ig_1", status: "completed", result: "iVBORw0KGgo=" },
      { type: "code_interpreter_call", id: "ci_1", status: "completed", code: "1+1", container_id: "c" },
      {
        type: "message",
        id: "msg_1",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "Done.", annotations: [] }],
      },
      { type: "computer_call", id: "cc_1", call_id: "call_c", action: { type: "screenshot" } },
      {
        type: "computer_call_output",
        call_id: "call_c",
        output: { type: "computer_screenshot", image_url: "https://x.test/s.png" },
      },
      { type: "item_reference", id: "msg_0" },
      { type: "message", role: "user", content: "Thanks." },
    ] as ResponseInputItem[];
    const messages = fromOpenAIResponses(payload, fixedImportOptions());
    expect(messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "user",
      "user",
    ]);
    expect(messages[1]!.content.map((block) => block.type)).toEqual([
      "opaque",
      "opaque",
      "reasoning",
      "opaque",
    ]);
    expect(messages[1]!.content[0]).toEqual({ type: "opaque", provider: "openai", data: payload[1] });
    expect(toOpenAIResponses(messages)).toEqual(payload);
    expect(toOpenAIResponses(storedForm(messages))).toEqual(payload);
    // Governance counts them: an item's JSON as text (each count rounded on its own).
    const counter = createEstimatingCounter({ family: "o200k_base" });
    const search = messages[1]!;
    const withoutItems = { ...search, content: search.content.filter((block) => block.type !== "opaque") };
    const items = [payload[1], payload[2], payload[4]];
    const itemTokens = items.reduce((sum, item) => sum + counter.countText(JSON.stringify(item)), 0);
    const added = counter.countMessage(search) - counter.countMessage(withoutItems);
    expect(Math.abs(added - itemTokens)).toBeLessThanOrEqual(items.length);
    // Other providers' models could not read them: their formats leave them out.
    const chat = JSON.stringify(toOpenAIChat(messages));
    expect(chat).not.toContain("web_search_call");
    expect(chat).toContain("Done.");
  });

  it("still refuses a malformed item of a type it models, naming the field", () => {
    expect(() => fromOpenAIResponses([{ type: "reasoning", summary: "not a list" }])).toThrow(
      ValidationError,
    );
    expect(() => fromOpenAIResponses([{ type: "function_call", call_id: "c", name: "f" }])).toThrow(
      /input\[0\]\.arguments/,
    );
  });
});
