import { describe, expect, it } from "vitest";
import { HttpError } from "../server/http/http-error.ts";
import { CtxkitError } from "./ctxkit-error.ts";
import { ContextOverflowError, ValidationError } from "./errors.ts";
import { isContextOverflowError } from "./overflow-recognition.ts";

describe("isContextOverflowError", () => {
  it("recognises the providers' own overflow answers", () => {
    const openai = Object.assign(new Error("This model's maximum context length is 128000 tokens."), {
      status: 400,
      code: "context_length_exceeded",
    });
    const anthropic = Object.assign(new Error("prompt is too long: 210000 tokens > 200000 maximum"), {
      status: 400,
    });
    expect([openai, anthropic, { status: 413, message: "" }].map(isContextOverflowError)).toEqual([
      true,
      true,
      true,
    ]);
    expect(isContextOverflowError(new Error("rate limited"))).toBe(false);
  });

  it("takes a ctxkit error, the server's HttpError included, by its code alone", () => {
    const figures = { requiredTokens: 9_000, windowTokens: 8_000, reservedOutputTokens: 1_000 };
    expect(isContextOverflowError(new ContextOverflowError(figures))).toBe(true);
    expect(isContextOverflowError(new HttpError(400, "context_overflow", "the request does not fit"))).toBe(
      true,
    );
    // Another code is another failure, whatever its text quotes.
    expect(
      isContextOverflowError(new HttpError(502, "upstream_error", "see context_overflow in the docs")),
    ).toBe(false);
    expect(isContextOverflowError(new ValidationError("prompt is too long for this field"))).toBe(false);
  });

  it("reads ctxkit's code from a ctxkit server's answer as an SDK throws it, not from free text", () => {
    // The OpenAI SDK copies the body's error.code onto the error.
    const openaiSdk = Object.assign(new Error("400 request needs 9000 tokens but the window is 8000"), {
      status: 400,
      code: "context_overflow",
    });
    // The AI SDK keeps the body as text.
    const aiSdk = Object.assign(new Error("Bad Request"), {
      statusCode: 400,
      responseBody: JSON.stringify({
        error: { code: "context_overflow", message: "request needs 9000 tokens" },
      }),
    });
    expect([openaiSdk, aiSdk].map(isContextOverflowError)).toEqual([true, true]);
    expect(isContextOverflowError(new Error("the tool printed context_overflow"))).toBe(false);
  });

  it("the HttpError is part of the one hierarchy", () => {
    const error = new HttpError(409, "conflict", "taken");
    expect(CtxkitError.isInstance(error)).toBe(true);
    expect(error).toBeInstanceOf(CtxkitError);
    expect(error.toJSON()).toEqual({ name: "HttpError", code: "conflict", message: "taken" });
  });
});
