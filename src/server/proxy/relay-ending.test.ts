import { describe, expect, it } from "vitest";
import { RelayEnding } from "./relay-ending.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

/** A relay's ending over a real stream, with what it sent and how it failed. */
function setup() {
  const failures: unknown[] = [];
  const ending = new RelayEnding((reason) => failures.push(reason));
  const stream = new ReadableStream<Uint8Array>({
    start: (controller) => ending.attach(controller),
    cancel: (reason) => ending.cancel(reason),
  });
  return { ending, failures, reader: stream.getReader() };
}

function deferred() {
  let resolve!: () => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("RelayEnding", () => {
  it("a client that leaves while the reply is stored waits for the store and does not fail the request", async () => {
    const { ending, failures, reader } = setup();
    const commit = deferred();
    const stored = ending.store(
      () => commit.promise,
      () => bytes("error"),
    );
    let cancelled = false;
    const cancel = reader.cancel("gone").then(() => (cancelled = true));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(cancelled).toBe(false);
    commit.resolve();
    expect(await stored).toBe(true);
    await cancel;
    ending.finish(bytes("data: [DONE]\n\n")); // nothing is sent to a client that is gone, and nothing throws
    expect(failures).toEqual([]);
  });

  it("a store that fails after the client left fails the request with the store's error", async () => {
    const { ending, failures, reader } = setup();
    const commit = deferred();
    const events: unknown[] = [];
    const stored = ending.store(
      () => commit.promise,
      (reason) => {
        events.push(reason);
        return bytes("error");
      },
    );
    const cancel = reader.cancel("gone");
    const error = new Error("the database went away");
    commit.reject(error);
    expect(await stored).toBe(false);
    await cancel;
    expect(failures).toEqual([error]);
    expect(events).toEqual([error]);
  });

  it("a client that left before the store started fails the request once, and the reply is not stored", async () => {
    const { ending, failures, reader } = setup();
    await reader.cancel("gone");
    let called = false;
    const stored = await ending.store(
      async () => {
        called = true;
      },
      () => bytes("error"),
    );
    expect(stored).toBe(false);
    expect(called).toBe(false);
    ending.fail(new Error("later"));
    expect(failures).toEqual(["gone"]);
  });
});
