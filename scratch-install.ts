import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqlitePeers } from "./bench/support/peer-stores.ts";
const begun = performance.now();
const peers = await sqlitePeers(mkdtempSync(join(tmpdir(), "peers-install-")));
console.log(((performance.now() - begun) / 1000).toFixed(0), "s");
for (const peer of peers) {
  console.log(peer.name, "store" in peer ? "ok" : peer.unavailable);
  if ("store" in peer) await peer.store.close();
}
