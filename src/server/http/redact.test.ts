import { describe, expect, it } from "vitest";
import { redact } from "./redact.ts";

describe("redact", () => {
  it("removes keys, bearer tokens and given secrets", () => {
    const key = `ctxk_0123456789ab_${"k".repeat(43)}`;
    const text = redact(
      `Incorrect API key provided: sk-abc***wxyz; Authorization: Bearer ${key}; api_key=s3cr3tvalue; token hunter2hunter2`,
      ["hunter2hunter2"],
    );
    expect(text).not.toContain("sk-abc");
    expect(text).not.toContain(key);
    expect(text).not.toContain("s3cr3tvalue");
    expect(text).not.toContain("hunter2");
    expect(text).toContain("Incorrect API key provided: [redacted]");
  });

  it("leaves ordinary text alone", () => {
    expect(redact("GET /v1/sessions/:id 200 3.1ms")).toBe("GET /v1/sessions/:id 200 3.1ms");
  });
});
