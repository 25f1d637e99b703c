// Bodies a client can get wrong or craft: each is answered with a 4xx in the shape of the API it was sent to, before
// anything is stored or sent upstream — never a 500, never stored altered.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { deepestNesting, hasOnlyWellFormedText } from "./http/json-nesting.ts";
import { startHarness, type ServerHarness } from "./test-support/server-harness.test-helpers.ts";

const harnesses: ServerHarness[] = [];
afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((harness) => harness.close()));
});

async function setup() {
  const harness = await startHarness({ responses: () => "ok" });
  harnesses.push(harness);
  return harness;
}

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const deepObject = (depth: number) => '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

/** Sends raw bytes as a JSON body. */
function send(
  harness: ServerHarness,
  path: string,
  body: string | Uint8Array<ArrayBuffer>,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${harness.server.url}${path}`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${harness.acme}`,
      "content-type": "application/json",
      "anthropic-version": "2023-06-01",
      ...headers,
    },
    body,
  });
}

const toolCall = (args: string) => ({
  role: "assistant",
  content: null,
  tool_calls: [{ id: "call_1", type: "function", function: { name: "f", arguments: args } }],
});

/** Each case: route, headers, body, and the API whose error shape the answer has. */
function cases(): { name: string; path: string; headers?: Record<string, string>; body: string }[] {
  const session = { "x-ctxkit-session": "deep" };
  const chat = (messages: unknown[]) => JSON.stringify({ model: "m", messages });
  return [
    {
      name: "stateless chat: tool call arguments 2,000 levels deep",
      path: "/v1/chat/completions",
      body: chat([
        { role: "user", content: "hi" },
        toolCall(nested(2_000)),
        { role: "tool", tool_call_id: "call_1", content: "r" },
      ]),
    },
    {
      name: "stateful chat: tool call arguments 2,000 levels deep",
      path: "/v1/chat/completions",
      headers: session,
      body: chat([
        { role: "user", content: "hi" },
        toolCall(deepObject(2_000)),
        { role: "tool", tool_call_id: "call_1", content: "r" },
      ]),
    },
    {
      name: "stateful chat: a body 10,000 levels deep",
      path: "/v1/chat/completions",
      headers: session,
      body: `{"model":"m","messages":[{"role":"user","content":"hi"}],"metadata":${nested(10_000)}}`,
    },
    {
      name: "stateless chat: a tool result 4,000 levels deep",
      path: "/v1/chat/completions",
      body: chat([
        { role: "user", content: "hi" },
        toolCall("{}"),
        { role: "tool", tool_call_id: "call_1", content: nested(4_000) },
      ]),
    },
    {
      name: "stateful chat: a tool result 4,000 levels deep",
      path: "/v1/chat/completions",
      headers: session,
      body: chat([
        { role: "user", content: "hi" },
        toolCall("{}"),
        { role: "tool", tool_call_id: "call_1", content: deepObject(4_000) },
      ]),
    },
    {
      name: "stateless Responses: function call arguments 2,000 levels deep",
      path: "/v1/responses",
      body: JSON.stringify({
        model: "m",
        store: false,
        input: [
          { role: "user", content: "hi" },
          { type: "function_call", call_id: "c1", name: "f", arguments: nested(2_000) },
          { type: "function_call_output", call_id: "c1", output: "r" },
        ],
      }),
    },
    {
      name: "stateful Responses: a function call output 4,000 levels deep",
      path: "/v1/responses",
      body: JSON.stringify({
        model: "m",
        input: [
          { role: "user", content: "hi" },
          { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
          { type: "function_call_output", call_id: "c1", output: nested(4_000) },
        ],
      }),
    },
    {
      name: "stateless Messages: tool input 2,000 levels deep",
      path: "/v1/messages",
      headers: { "x-ctxkit-mode": "stateless" },
      body: `{"model":"claude-test","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"f","input":${deepObject(2_000)}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"r"}]}]}`,
    },
    {
      name: "stateful Messages: a tool result 4,000 levels deep",
      path: "/v1/messages",
      headers: session,
      body: JSON.stringify({
        model: "claude-test",
        max_tokens: 10,
        messages: [
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "f", input: {} }] },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: nested(4_000) }] },
        ],
      }),
    },
  ];
}

/** Checks the answer is a 4xx in the error shape of the route's API. */
async function expectRefused(answer: Response, path: string, name: string): Promise<void> {
  const text = await answer.text();
  expect(answer.status, `${name}: ${text.slice(0, 300)}`).toBeGreaterThanOrEqual(400);
  expect(answer.status, `${name}: ${text.slice(0, 300)}`).toBeLessThan(500);
  const body = JSON.parse(text) as Record<string, unknown>;
  if (path === "/v1/messages") {
    expect(body, name).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
  } else {
    expect(body, name).toMatchObject({ error: { type: "invalid_request_error" } });
  }
}

describe("malformed request bodies", () => {
  it("answers JSON nested at any depth (tool call arguments and tool results too) with a 4xx, calling nothing", async () => {
    const harness = await setup();
    for (const { name, path, headers, body } of cases()) {
      await expectRefused(await send(harness, path, body, headers), path, name);
    }
    expect(harness.upstream.requests).toHaveLength(0);
    expect((await harness.store.listSessions()).sessions).toEqual([]);
    expect(harness.logs.join("\n")).not.toMatch(/RangeError|Maximum call stack/);
  });

  it("refuses a body that is not valid UTF-8 or holds unpaired surrogates, on every route, and stores nothing altered", async () => {
    const harness = await setup();
    const encoder = new TextEncoder();
    const withBadByte = (json: string) => {
      const [before, after] = json.split("@");
      return new Uint8Array([...encoder.encode(before), 0xff, 0xfe, ...encoder.encode(after)]);
    };
    const routes = [
      [
        "/v1/chat/completions",
        '{"model":"m","messages":[{"role":"user","content":"a@b"}]}',
        { "x-ctxkit-session": "u8" },
      ],
      ["/v1/chat/completions", '{"model":"m","messages":[{"role":"user","content":"a@b"}]}', {}],
      ["/v1/responses", '{"model":"m","input":"a@b"}', {}],
      [
        "/v1/messages",
        '{"model":"claude-test","max_tokens":10,"messages":[{"role":"user","content":"a@b"}]}',
        { "x-ctxkit-session": "u8m" },
      ],
      ["/v1/sessions/u8t/turns", '{"message":"a@b"}', {}],
      ["/v1/sessions", '{"title":"a@b"}', {}],
    ] as const;
    for (const [path, json, headers] of routes) {
      const answer = await send(harness, path, withBadByte(json), headers);
      const text = await answer.text();
      expect(answer.status, `${path}: ${text}`).toBe(400);
      expect(text, path).toMatch(/UTF-8/);
    }
    // Valid UTF-8 and valid JSON, but a lone surrogate escape: text no store or upstream can hold as sent.
    for (const [path, json, headers] of routes) {
      const answer = await send(harness, path, json.replace("@", "\\ud800"), headers);
      const text = await answer.text();
      expect(answer.status, `${path}: ${text}`).toBe(400);
      expect(text, path).toMatch(/not valid Unicode/);
    }
    expect(harness.upstream.requests).toHaveLength(0);
    expect((await harness.store.listSessions()).sessions).toEqual([]);
  });

  it("answers every other malformed body with a 4xx in the route's own error shape", async () => {
    const harness = await setup();
    const routes = [
      ["/v1/chat/completions", {}],
      ["/v1/chat/completions", { "x-ctxkit-session": "bad" }],
      ["/v1/responses", {}],
      ["/v1/responses", { "x-ctxkit-mode": "stateless" }],
      ["/v1/messages", { "x-ctxkit-session": "bad" }],
      ["/v1/messages", { "x-ctxkit-mode": "stateless" }],
    ] as const;
    // Not JSON, or not an object: refused by every route.
    const unreadable = ["{", "[]", "null", '"text"', "1e999", "\uFEFF{}"];
    // JSON of the wrong shape: refused by every route but stateless Messages, which forwards what it cannot
    // govern for Anthropic's API to judge (newer fields and blocks than this server knows).
    const misshapen = [
      "",
      '{"model":"m"}',
      '{"model":"m","messages":5,"input":5}',
      '{"model":"m","messages":[],"input":[]}',
      '{"model":"m","messages":[{"role":"nobody","content":"x"}],"input":[{"role":"nobody","content":"x"}]}',
      '{"model":"m","messages":[{"role":"user","content":{"x":1}}],"input":{"x":1}}',
      '{"model":["m"],"max_tokens":"ten","messages":[{"role":"user","content":"x"}],"input":"x"}',
    ];
    for (const [path, headers] of routes) {
      const forwards = path === "/v1/messages" && "x-ctxkit-mode" in headers;
      for (const body of forwards ? unreadable : [...unreadable, ...misshapen]) {
        await expectRefused(
          await send(harness, path, body, headers),
          path,
          `${path} ${JSON.stringify(headers)} ${body}`,
        );
      }
      const text = await send(harness, path, "{}", { ...headers, "content-type": "text/plain" });
      expect(text.status).toBe(415);
    }
    expect(harness.upstream.requests).toHaveLength(0);
  });
});

/** The nesting of a JSON value, and every text it holds (keys and strings) joined. */
function measure(value: unknown): { depth: number; texts: string } {
  let depth = 0;
  const texts: string[] = [];
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [current, level] = stack.pop()!;
    if (typeof current === "string") texts.push(current);
    if (current === null || typeof current !== "object") continue;
    depth = Math.max(depth, level + 1);
    for (const [key, item] of Object.entries(current)) {
      texts.push(key);
      stack.push([item, level + 1]);
    }
  }
  return { depth, texts: texts.join("") };
}

describe("deepestNesting", () => {
  it("is at least the nesting of any JSON value's text, and exactly it when no string holds a bracket", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (value) => {
        const { depth, texts } = measure(value);
        const found = deepestNesting(JSON.stringify(value));
        expect(found).toBeGreaterThanOrEqual(depth);
        if (!/[[\]{}]/.test(texts)) expect(found).toBe(depth);
      }),
    );
  });

  it("counts JSON held in a string, and nothing for brackets escaped or closed too often", () => {
    expect(deepestNesting(JSON.stringify({ arguments: "[[[[1]]]]" }))).toBe(4);
    expect(deepestNesting(JSON.stringify(["]]]]", "[x"]))).toBe(1);
    expect(deepestNesting('"\\"[[')).toBe(2);
  });
});

describe("hasOnlyWellFormedText", () => {
  it("is true exactly when every string and key survives UTF-8 unaltered", () => {
    const survives = (text: string) => Buffer.from(text, "utf8").toString("utf8") === text;
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), fc.string({ unit: "binary" }), (key, text) => {
        expect(hasOnlyWellFormedText({ [key]: [text] })).toBe(survives(key) && survives(text));
      }),
    );
  });
});
