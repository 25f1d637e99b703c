import { describe, expect, it } from "vitest";
import { guardStream, MAX_UNREAD_BYTES } from "./guard-streams.ts";

/** A source that writes `total` bytes in 64 KiB chunks as fast as it is read, and records its cancellation. */
function source(total: number) {
  const chunk = new Uint8Array(64 * 1024);
  let written = 0;
  const cancelled: unknown[] = [];
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (written >= total) return controller.close();
      written += chunk.length;
      controller.enqueue(chunk);
    },
    cancel: (reason) => void cancelled.push(reason),
  });
  return { stream, cancelled, written: () => written };
}

const settled = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("guardStream", () => {
  it("holds at most MAX_UNREAD_BYTES for a client that does not read, then drops it and cancels the source", async () => {
    const upstream = source(16 * MAX_UNREAD_BYTES);
    const dropped: Error[] = [];
    const guarded = guardStream(upstream.stream, { drop: (reason) => dropped.push(reason) });
    while (dropped.length === 0 && upstream.written() < 16 * MAX_UNREAD_BYTES) await settled();
    expect(dropped).toHaveLength(1);
    expect(upstream.cancelled).toHaveLength(1);
    // Read no further than the bound (and the chunk that crossed it).
    expect(upstream.written()).toBeLessThanOrEqual(MAX_UNREAD_BYTES + 2 * 64 * 1024);
    let held = 0;
    const reader = guarded.getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) held += next.value.length;
    expect(held).toBeLessThanOrEqual(MAX_UNREAD_BYTES + 64 * 1024);
  });

  it("errors the stream of a client it cannot disconnect", async () => {
    const upstream = source(16 * MAX_UNREAD_BYTES);
    const guarded = guardStream(upstream.stream);
    while (upstream.cancelled.length === 0) await settled();
    const reader = guarded.getReader();
    await expect(
      (async () => {
        for (let next = await reader.read(); !next.done; next = await reader.read());
      })(),
    ).rejects.toThrow(/unread; it was dropped/);
  });

  it("relays every byte to a client that reads, however long the stream", async () => {
    const upstream = source(3 * MAX_UNREAD_BYTES);
    const dropped: Error[] = [];
    const reader = guardStream(upstream.stream, { drop: (reason) => dropped.push(reason) }).getReader();
    let received = 0;
    for (let next = await reader.read(); !next.done; next = await reader.read())
      received += next.value.length;
    expect(received).toBe(3 * MAX_UNREAD_BYTES);
    expect(dropped).toEqual([]);
  });

  it("ends the stream and cancels the source once the key is no longer valid", async () => {
    let valid = true;
    const never = new ReadableStream<Uint8Array>({ cancel: () => undefined });
    const reader = guardStream(never, { isValid: async () => valid, recheckMs: 1 }).getReader();
    valid = false;
    expect((await reader.read()).done).toBe(true);
  });
});
