// A LangGraph.js SqliteSaver in a process of its own, for the storage bench (peer-stores.ts): better-sqlite3, a
// native addon, can abort the process it runs in (below), so it gets its own. Appends the slices of turns it is
// sent and answers with the time they took; loads a thread when asked.
import { createRequire } from "node:module";
import { join } from "node:path";
import type { MessageInput } from "../../src/model/message.ts";
import { checkpointerTurns, type Checkpointer } from "./checkpointer-turns.ts";

type Request =
  | { readonly op: "append"; readonly work: readonly { session: string; turn: MessageInput[] }[] }
  | { readonly op: "load"; readonly session: string };

const [root, path] = process.argv.slice(2) as [string, string];
const require = createRequire(join(root, "package.json"));
const { SqliteSaver } = require("@langchain/langgraph-checkpoint-sqlite") as {
  SqliteSaver: {
    fromConnString(path: string): Checkpointer & {
      db: { pragma(text: string): unknown; prepare(text: string): unknown };
    };
  };
};
const { uuid6 } = require("@langchain/langgraph-checkpoint") as { uuid6: (clock: number) => string };
const saver = SqliteSaver.fromConnString(path);
// The saver prepares a statement per call and drops it; better-sqlite3 12.11.1 on this Node 24 aborts
// (`Assertion failed: (env) != nullptr` in Statement::~Statement) when the garbage collector frees one outside
// JavaScript. One statement per SQL text, kept: it can only make the saver faster.
const statements = new Map<string, unknown>();
const prepare = saver.db.prepare.bind(saver.db);
saver.db.prepare = (text: string) => {
  let statement = statements.get(text);
  if (statement === undefined) statements.set(text, (statement = prepare(text)));
  return statement;
};
// Its setup sets WAL; better-sqlite3 builds SQLite with NORMAL as the WAL default: FULL, as ctxkit.
saver.db.pragma("synchronous = FULL");
const turns = checkpointerTurns(saver, uuid6);
process.on("message", (request: Request) => {
  void (async () => {
    try {
      if (request.op === "append") {
        const begun = performance.now();
        for (const { session, turn } of request.work) await turns.append(session, turn);
        process.send!({ ok: true, value: performance.now() - begun });
      } else process.send!({ ok: true, value: await turns.load(request.session) });
    } catch (error) {
      process.send!({ ok: false, error: error instanceof Error ? error.message : String(error) });
    }
  })();
});
process.send!({ ok: true, value: "ready" });
