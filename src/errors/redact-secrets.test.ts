import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { redactSecrets } from "./redact-secrets.ts";

describe("redactSecrets", () => {
  it.each([
    [
      "an OpenAI key",
      "Incorrect API key provided: sk-proj-AbCdEf0123456789xyz.",
      "sk-proj-AbCdEf0123456789xyz",
    ],
    ["a partly masked key", "Incorrect API key provided: sk-abc***wxyz", "sk-abc***wxyz"],
    [
      "an Anthropic key",
      "invalid x-api-key sk-ant-api03-AbCdEfGhIjKlMnOp-qrs",
      "sk-ant-api03-AbCdEfGhIjKlMnOp-qrs",
    ],
    ["an OpenRouter key", "key sk-or-v1-0123456789abcdef0123 is disabled", "sk-or-v1-0123456789abcdef0123"],
    [
      "a Gemini key",
      "API key not valid: AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv",
      "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv",
    ],
    ["a ctxkit key", `rejected ctxk_0123456789ab_${"k".repeat(43)}`, `ctxk_0123456789ab_${"k".repeat(43)}`],
    ["a bearer token", "Authorization: Bearer opaque.token-value_123", "opaque.token-value_123"],
    ["a basic credential", "authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz"],
    [
      "a key= query parameter",
      "GET https://generativelanguage.googleapis.com/v1/models?key=abc123opaque&alt=sse",
      "abc123opaque",
    ],
    ["an api_key assignment", 'config {"api_key": "s3cr3tvalue"}', "s3cr3tvalue"],
    ["a URL password", "cannot connect to postgres://ctxkit:hunter2pw@db:5432/ctxkit", "hunter2pw"],
    [
      "a JWT",
      "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
      "eyJhbGciOiJIUzI1NiJ9",
    ],
  ])("removes %s", (_label, text, secret) => {
    const redacted = redactSecrets(text);
    expect(redacted).not.toContain(secret);
    expect(redacted).toContain("[redacted]");
  });

  it("keeps the words around a secret, and ordinary text as it is", () => {
    expect(redactSecrets("Incorrect API key provided: sk-abc***wxyz; check it")).toBe(
      "Incorrect API key provided: [redacted]; check it",
    );
    expect(redactSecrets("https://host/v1?alt=sse&key=AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUv&x=1")).toBe(
      "https://host/v1?alt=sse&key=[redacted]&x=1",
    );
    expect(redactSecrets("postgres://ctxkit:pw@db/ctxkit")).toBe("postgres://ctxkit:[redacted]@db/ctxkit");
    for (const text of [
      "GET /v1/sessions/:id 200 3.1ms",
      "the request needs 11,835 tokens; the token budget is 8,000",
      `blob "blob:${"ab12".repeat(16)}" not found`,
      "connection refused by http://127.0.0.1:11434/v1",
    ]) {
      expect(redactSecrets(text)).toBe(text);
    }
  });

  it("removes given values and secret-looking environment values of any shape, longest first", () => {
    const text = "the server said: key my-own-key-77 and my-own-key-77-extended are wrong; HOME is /home/ada";
    expect(redactSecrets(text, { secrets: ["my-own-key-77", "my-own-key-77-extended"] })).toBe(
      "the server said: key [redacted] and [redacted] are wrong; HOME is /home/ada",
    );
    expect(redactSecrets(text, { env: { LOCAL_LLM_API_KEY: "my-own-key-77", HOME: "/home/ada" } })).toBe(
      "the server said: key [redacted] and [redacted]-extended are wrong; HOME is /home/ada",
    );
  });

  it("with unknownTokens, also removes long random-looking tokens and `password x` (a command's stderr)", () => {
    const stderr = "auth failed for token 9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc; password hunter2";
    const redacted = redactSecrets(stderr, { unknownTokens: true });
    expect(redacted).not.toContain("9f8e7d6c5b4a");
    expect(redacted).not.toContain("hunter2");
    expect(redactSecrets("the token budget is 8,000")).toBe("the token budget is 8,000");
  });

  it("never leaves a generated key of a known shape in any surrounding text", () => {
    const key = fc.oneof(
      fc.stringMatching(/^sk-(?:ant-|proj-|or-v1-)?[A-Za-z0-9_-]{20,40}$/),
      fc.stringMatching(/^AIza[0-9A-Za-z_-]{35}$/),
    );
    const before = fc.stringMatching(/^[ a-z:,.()]{0,20}[ :,(]$/);
    const after = fc.stringMatching(/^[ a-z:,.()]{0,20}$/);
    fc.assert(
      fc.property(before, key, after, (before, secret, after) => {
        expect(redactSecrets(`${before}${secret}${after}`)).not.toContain(secret);
      }),
    );
  });
});
