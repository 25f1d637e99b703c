import { describe, expect, it } from "vitest";
import * as core from "../index.ts";
import * as server from "../server/index.ts";
import * as sync from "./index.ts";

describe("ctxkit sync barrel", () => {
  it("is the ctxkit/sync subpath, not part of the core entry; the WebSocket endpoint is in ctxkit/server", () => {
    for (const name of ["ConversationLedger", "SyncClient", "SyncHub", "CliModel", "toCliPrompt"] as const) {
      expect(typeof sync[name]).toBe("function");
      expect(name in core).toBe(false);
    }
    expect(sync.SYNC_SUBPROTOCOL).toBe("ctxkit.sync");
    expect(typeof server.attachSyncEndpoint).toBe("function");
    expect("attachSyncEndpoint" in core).toBe(false);
  });
});
