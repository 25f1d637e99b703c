import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { historyArbitrary, signedReasoning } from "../test-support/index.ts";
import type {
  AnthropicCacheControl,
  AnthropicMessage,
  AnthropicRequestPayload,
  AnthropicTool,
} from "./anthropic-message.ts";
import { fromAnthropic } from "./from-anthropic.ts";
import { toAnthropic } from "./to-anthropic.ts";
import {
  anthropicBreakpointsOf,
  countAnthropicBreakpoints,
  withAnthropicBreakpoints,
  type AnthropicCacheableRequest,
} from "./with-anthropic-breakpoints.ts";

const FIVE: AnthropicCacheControl = { type: "ephemeral" };
const HOUR: AnthropicCacheControl = { type: "ephemeral", ttl: "1h" };

const tools: AnthropicTool[] = [
  { name: "read_file", input_schema: { type: "object" } },
  { name: "bash", description: "Run a command", input_schema: { type: "object" } },
];

/** user, assistant (tool call), tool result, assistant (tool call), tool result. */
function agentLoop(): AnthropicMessage[] {
  return [
    { role: "user", content: "Fix the failing test" },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Reading it." },
        { type: "tool_use", id: "c1", name: "read_file", input: { path: "a.ts" } },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "const a = 1;" }] },
    {
      role: "assistant",
      content: [{ type: "tool_use", id: "c2", name: "bash", input: { command: "npm test" } }],
    },
    {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "c2", content: "1 failed", is_error: true }],
    },
  ];
}

/** Every marker in request order (a tool result's inner content before the result itself; automatic last). */
function markers(request: AnthropicCacheableRequest): { at: string; control: AnthropicCacheControl }[] {
  const found: { at: string; control: AnthropicCacheControl }[] = [];
  const add = (at: string, control: unknown) => {
    if (control !== undefined) found.push({ at, control: control as AnthropicCacheControl });
  };
  request.tools?.forEach((tool, index) => add(`tools[${index}]`, tool.cache_control));
  if (Array.isArray(request.system))
    request.system.forEach((block, index) => add(`system[${index}]`, block.cache_control));
  request.messages.forEach((message, index) => {
    if (typeof message.content === "string") return;
    message.content.forEach((block, position) => {
      if (block.type === "tool_result" && Array.isArray(block.content))
        block.content.forEach((inner, at) =>
          add(`messages[${index}][${position}][${at}]`, inner.cache_control),
        );
      add(`messages[${index}][${position}]`, "cache_control" in block ? block.cache_control : undefined);
    });
  });
  add("automatic", request.cache_control);
  return found;
}

const ttlRank = (control: AnthropicCacheControl) => (control.ttl === "1h" ? 2 : 1);
const inTtlOrder = (request: AnthropicCacheableRequest) =>
  markers(request).every(
    (marker, index, all) => index === 0 || ttlRank(all[index - 1]!.control) >= ttlRank(marker.control),
  );

describe("withAnthropicBreakpoints", () => {
  it("marks the last tool, the system prompt, the previous request's newest message and the newest one", () => {
    const request = { tools, system: "You are a coding agent.", messages: agentLoop() };
    const before = structuredClone(request);
    const marked = withAnthropicBreakpoints(request, { minTokens: 0 });
    expect(markers(marked).map((marker) => marker.at)).toEqual([
      "tools[1]",
      "system[0]",
      "messages[2][0]",
      "messages[4][0]",
    ]);
    expect(marked.system).toEqual([{ type: "text", text: "You are a coding agent.", cache_control: FIVE }]);
    expect(countAnthropicBreakpoints(marked)).toBe(4);
    expect(request).toEqual(before); // the input is not changed
  });

  it("marks the last block of a system given as blocks, and works without tools or system", () => {
    const system = [
      { type: "text" as const, text: "Identity." },
      { type: "text" as const, text: "Rules." },
    ];
    const marked = withAnthropicBreakpoints({ system, messages: agentLoop() }, { minTokens: 0 });
    expect(markers(marked).map((marker) => marker.at)).toEqual([
      "system[1]",
      "messages[2][0]",
      "messages[4][0]",
    ]);
    const bare: AnthropicCacheableRequest = withAnthropicBreakpoints(
      { messages: agentLoop() },
      { minTokens: 0 },
    );
    expect(markers(bare).map((marker) => marker.at)).toEqual(["messages[2][0]", "messages[4][0]"]);
    expect(bare.tools).toBeUndefined();
    expect(bare.system).toBeUndefined();
  });

  it("with fewer than two messages, turns a lone string into a marked text block", () => {
    const marked = withAnthropicBreakpoints(
      { tools, system: "Be brief.", messages: [{ role: "user", content: "Hi" }] },
      { minTokens: 0 },
    );
    expect(marked.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "Hi", cache_control: FIVE }] },
    ]);
    expect(countAnthropicBreakpoints(marked)).toBe(3);
    expect(countAnthropicBreakpoints(withAnthropicBreakpoints({ messages: [] }, { minTokens: 0 }))).toBe(0);
  });

  it("never marks the request-only notice: the tool result before it in the same message carries it", () => {
    const messages = agentLoop();
    messages[4] = {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "c2", content: "1 failed" },
        { type: "text", text: "[Context budget notice] Wrap up." },
      ],
    };
    const marked = withAnthropicBreakpoints({ messages }, { minTokens: 0, ephemeralBlocks: 1 });
    expect(markers(marked).map((marker) => marker.at)).toEqual(["messages[2][0]", "messages[4][0]"]);
    // As a message of its own (after a user turn that answered), the notice stays a plain string.
    const own: AnthropicMessage[] = [
      ...agentLoop().slice(0, 2),
      { role: "user", content: [{ type: "tool_result", tool_use_id: "c1", content: "ok" }] },
      { role: "assistant", content: [{ type: "text", text: "Done." }] },
      { role: "user", content: "[Context budget notice] Wrap up." },
    ];
    const alone = withAnthropicBreakpoints({ messages: own }, { minTokens: 0, ephemeralBlocks: 1 });
    expect(alone.messages[4]).toBe(own[4]);
    expect(markers(alone).map((marker) => marker.at)).toEqual(["messages[2][0]", "messages[3][0]"]);
  });

  it("does not mark thinking blocks: the block before them carries the breakpoint", () => {
    const messages: AnthropicMessage[] = [
      { role: "user", content: "Plan it" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Plan:" },
          { type: "thinking", thinking: "…", signature: "c2ln" },
        ],
      },
    ];
    const marked = withAnthropicBreakpoints({ messages }, { minTokens: 0 });
    expect(markers(marked).map((marker) => marker.at)).toEqual(["messages[0][0]", "messages[1][0]"]);
  });

  it.each([
    ["a tool", (r: AnthropicRequestPayload) => (r.tools![0]!.cache_control = FIVE)],
    [
      "the system prompt",
      (r: AnthropicRequestPayload) => (r.system = [{ type: "text", text: "S", cache_control: FIVE }]),
    ],
    [
      "a message block",
      (r: AnthropicRequestPayload) =>
        ((r.messages[1]!.content as { cache_control?: unknown }[])[0]!.cache_control = FIVE),
    ],
    [
      "a tool result's content",
      (r: AnthropicRequestPayload) =>
        (r.messages[2] = {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "c1",
              content: [{ type: "text", text: "x", cache_control: FIVE }],
            },
          ],
        }),
    ],
    [
      "automatic caching",
      (r: AnthropicRequestPayload & { cache_control?: AnthropicCacheControl }) => (r.cache_control = FIVE),
    ],
  ])("keeps the caller's breakpoint on %s and stays within four", (_where, preset) => {
    const request: AnthropicRequestPayload & { cache_control?: AnthropicCacheControl } = {
      tools: structuredClone(tools),
      system: "S",
      messages: agentLoop(),
    };
    preset(request);
    const callers = markers(request);
    const marked = withAnthropicBreakpoints(request, { minTokens: 0 });
    expect(countAnthropicBreakpoints(marked)).toBe(4);
    for (const marker of callers) expect(markers(marked)).toContainEqual(marker);
  });

  it("adds nothing when the caller already set four", () => {
    const request: AnthropicRequestPayload = {
      tools: [{ ...tools[0]!, cache_control: FIVE }],
      system: [{ type: "text", text: "S", cache_control: FIVE }],
      messages: [
        { role: "user", content: [{ type: "text", text: "a", cache_control: FIVE }] },
        { role: "assistant", content: [{ type: "text", text: "b", cache_control: FIVE }] },
        { role: "user", content: "c" },
      ],
    };
    expect(withAnthropicBreakpoints(request, { minTokens: 0 })).toBe(request);
  });

  it("writes 1-hour breakpoints when asked, and never a 1-hour one after the caller's 5-minute one", () => {
    const hourly = withAnthropicBreakpoints(
      { tools, system: "S", messages: agentLoop() },
      { minTokens: 0, ttl: "1h" },
    );
    expect(markers(hourly).map((marker) => marker.control)).toEqual([HOUR, HOUR, HOUR, HOUR]);
    const request = {
      tools,
      system: [{ type: "text" as const, text: "S", cache_control: FIVE }],
      messages: agentLoop(),
    };
    const mixed = withAnthropicBreakpoints(request, { minTokens: 0, ttl: "1h" });
    expect(markers(mixed).map((marker) => [marker.at, marker.control.ttl ?? "5m"])).toEqual([
      ["tools[1]", "1h"],
      ["system[0]", "5m"],
      ["messages[2][0]", "5m"],
      ["messages[4][0]", "5m"],
    ]);
    expect(inTtlOrder(mixed)).toBe(true);
  });

  it("places no breakpoint on a prefix shorter than the model's minimum", () => {
    const short = { tools, system: "S", messages: agentLoop() };
    expect(withAnthropicBreakpoints(short, { model: "claude-haiku-4-5" })).toBe(short);
    const long = { tools, system: "The rules of this repository. ".repeat(800), messages: agentLoop() };
    const marked = withAnthropicBreakpoints(long, { model: "claude-haiku-4-5" });
    // The tools alone are far below Haiku 4.5's 4,096 tokens; the system prompt takes the prefix past it.
    expect(markers(marked).map((marker) => marker.at)).toEqual([
      "system[0]",
      "messages[2][0]",
      "messages[4][0]",
    ]);
  });

  it("reports the breakpoints a payload carries, and an imported payload brings none back", () => {
    const marked = withAnthropicBreakpoints({ tools, system: "S", messages: agentLoop() }, { minTokens: 0 });
    expect(anthropicBreakpointsOf(marked)).toEqual([
      { position: { at: "tools" }, ttl: "5m" },
      { position: { at: "system" }, ttl: "5m" },
      { position: { at: "message", index: 2 }, ttl: "5m" },
      { position: { at: "message", index: 4 }, ttl: "5m" },
    ]);
    // Markers are per request: importing a marked payload (tool_use extras included) and sending it again
    // carries none of them, so they never take a slot from the next request's breakpoints.
    const messages = agentLoop();
    messages[3] = {
      role: "assistant",
      content: [
        { type: "tool_use", id: "c2", name: "bash", input: {}, caller: "direct", cache_control: FIVE },
      ],
    };
    const again = toAnthropic(fromAnthropic({ system: marked.system, messages }));
    expect(countAnthropicBreakpoints(again)).toBe(0);
    expect(again.messages[3]).toEqual({
      role: "assistant",
      content: [{ caller: "direct", type: "tool_use", id: "c2", name: "bash", input: {} }],
    });
  });

  it("property: never a fifth breakpoint on any payload, the caller's kept, TTLs in order", () => {
    const payload = fc
      .record({
        history: historyArbitrary({ reasoning: signedReasoning }),
        toolCount: fc.integer({ min: 0, max: 3 }),
        seed: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 64, maxLength: 64 }),
        presetChance: fc.constantFrom(0, 0.05, 0.2, 0.5),
        ttl: fc.constantFrom<"5m" | "1h">("5m", "1h"),
        ephemeralBlocks: fc.integer({ min: 0, max: 2 }),
        minTokens: fc.constantFrom(0, 20, 1_024),
      })
      .map((drawn) => {
        let next = 0;
        const roll = () => drawn.seed[next++ % drawn.seed.length]!;
        // Caller markers only 5 min after 1 h: the first half of the request 1 h, the rest 5 min.
        let hourly = roll() < 0.5;
        const preset = <Block extends object>(block: Block): Block => {
          if (roll() >= drawn.presetChance) return block;
          const control = hourly ? HOUR : FIVE;
          if (roll() < 0.3) hourly = false;
          return { ...block, cache_control: control };
        };
        const converted = toAnthropic(drawn.history);
        const request: AnthropicRequestPayload & { cache_control?: AnthropicCacheControl } = {
          ...(drawn.toolCount > 0 && {
            tools: Array.from({ length: drawn.toolCount }, (_, index) =>
              preset<AnthropicTool>({ name: `tool${index}`, input_schema: { type: "object" } }),
            ),
          }),
          ...(converted.system !== undefined && {
            system: typeof converted.system === "string" ? converted.system : converted.system.map(preset),
          }),
          messages: converted.messages.map(
            (message) =>
              ({
                ...message,
                content:
                  typeof message.content === "string"
                    ? message.content
                    : message.content.map((block) =>
                        block.type === "thinking" || block.type === "redacted_thinking"
                          ? block
                          : preset(
                              block.type === "tool_result" && Array.isArray(block.content)
                                ? { ...block, content: block.content.map(preset) }
                                : block,
                            ),
                      ),
              }) as AnthropicMessage,
          ),
        };
        if (roll() < drawn.presetChance && !hourly) request.cache_control = FIVE;
        return { ...drawn, request };
      });
    fc.assert(
      fc.property(payload, ({ request, ttl, ephemeralBlocks, minTokens }) => {
        const callers = markers(request);
        const marked = withAnthropicBreakpoints(request, { ttl, ephemeralBlocks, minTokens });
        const all = markers(marked);
        expect(all.length).toBeLessThanOrEqual(Math.max(4, callers.length));
        expect(countAnthropicBreakpoints(marked)).toBe(all.length);
        for (const marker of callers) expect(all).toContainEqual(marker);
        if (inTtlOrder(request)) expect(inTtlOrder(marked)).toBe(true);
        // Without caller markers, a minimum or a notice, the newest message is marked when it can be.
        const last = request.messages.at(-1);
        const canCarry =
          last !== undefined &&
          (typeof last.content === "string"
            ? last.content !== ""
            : last.content.some((block) => block.type !== "thinking" && block.type !== "redacted_thinking"));
        if (callers.length === 0 && minTokens === 0 && ephemeralBlocks === 0 && canCarry)
          expect(all.some((marker) => marker.at.startsWith(`messages[${request.messages.length - 1}]`))).toBe(
            true,
          );
      }),
      { numRuns: 300 },
    );
  });
});
