import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { loadSettings } from "../../config/load-settings.ts";
import { requireSettingDefinition, saveSetting } from "../../config/save-setting.ts";
import { echoedSettingValue } from "../../config/secret-settings.ts";
import { parseSettingText } from "../../config/setting-value.ts";
import { NotFoundError, ValidationError } from "../../errors/errors.ts";
import type { JsonValue } from "../../model/message.ts";
import { exportSessionsJsonl } from "../../store/jsonl/export-sessions-jsonl.ts";
import { CHAT_AGENT } from "./chat-engine.ts";
import type { ChatRuntime } from "./chat-runtime.ts";
import { contextReport } from "./context-report.ts";

/** What a slash command printed (text) and reports in `--json` mode (data); `exit` ends the chat. */
export interface CommandResult {
  readonly text: string;
  readonly data: JsonValue;
  readonly exit?: boolean;
}

type Handler = (runtime: ChatRuntime, args: string) => Promise<CommandResult>;

interface SlashCommand {
  readonly usage: string;
  readonly description: string;
  readonly run: Handler;
}

const sessionHint = "list them with /sessions";

/** Settings a running chat cannot change: the stores it opened, and the server's. */
const restartSettings = ["db", "pgUrl", "memory.enabled", "sessionRetentionDays", "server"];

/** True when `/config key …` can apply to the running chat (everything the engine and the model calls read). */
function appliesAtOnce(key: string): boolean {
  return !restartSettings.some((name) => key === name || key.startsWith(`${name}.`));
}

function requireArgument(args: string, usage: string): string {
  if (args === "") throw new ValidationError(`missing argument; usage: ${usage}`);
  return args;
}

async function requireSession(runtime: ChatRuntime, id: string) {
  const record = await runtime.stores.sessions.getSession(id);
  if (record === undefined) throw new NotFoundError("session", id, sessionHint);
  return record;
}

const commands: Readonly<Record<string, SlashCommand>> = {
  context: {
    usage: "/context [clear]",
    description:
      "messages, roles, characters, tokens by channel and window use; `clear` starts the context afresh",
    run: async (runtime, args) => {
      if (args === "clear") {
        await runtime.session.clear();
        runtime.lastRequest = undefined;
        return { text: "context cleared; the stored history is kept", data: { cleared: true } };
      }
      if (args !== "") throw new ValidationError(`unknown argument "${args}"; usage: /context [clear]`);
      const request = await runtime.inspectNext();
      return contextReport(await runtime.session.stats(), request?.inspection.channels);
    },
  },
  compact: {
    usage: "/compact [focus]",
    description: "summarise the older history now (optionally focused on a topic)",
    run: async (runtime, args): Promise<CommandResult> => {
      if ((await runtime.inspectNext()) === undefined) {
        return { text: "nothing to compact yet", data: { compacted: false } };
      }
      const events = await runtime.session.compact(args === "" ? {} : { focus: args });
      runtime.lastRequest = undefined;
      const done = events.find((event) => event.type === "compaction-end");
      if (done === undefined) {
        const rolledBack = events.find((event) => event.type === "compaction-rolled-back");
        const reason = rolledBack?.type === "compaction-rolled-back" ? `: ${rolledBack.reason}` : "";
        return { text: `nothing to compact${reason}`, data: { compacted: false } };
      }
      const text = `compacted: ${done.tokensBefore.toLocaleString("en-US")} → ${done.tokensAfter.toLocaleString("en-US")} tokens`;
      return {
        text,
        data: { compacted: true, tokensBefore: done.tokensBefore, tokensAfter: done.tokensAfter },
      };
    },
  },
  config: {
    usage: "/config <key> <value>",
    description:
      "save a setting in the project settings file; it applies at once (the database and memory.enabled next start)",
    run: async (runtime, args) => {
      const match = /^(\S+)\s+([\s\S]+)$/.exec(args);
      if (match === null) throw new ValidationError("usage: /config <key> <value>");
      const [, key = "", text = ""] = match;
      const definition = requireSettingDefinition(key);
      const saved = saveSetting("project", key, parseSettingText(definition, text), runtime.location);
      const applied = appliesAtOnce(key);
      if (applied) {
        // Read back with every source's precedence (an environment variable still wins over the file).
        const { settings } = loadSettings(runtime.location);
        const spec = key === "model" && typeof saved.value === "string" ? saved.value : runtime.modelSpec;
        await runtime.reconfigure(settings, spec);
      }
      const shown = JSON.stringify(echoedSettingValue(definition, saved.value));
      const when = applied ? "in use now" : "applies from the next ctxkit chat";
      return {
        text: `${key} = ${shown} saved in ${saved.file}; ${when}`,
        data: { key, file: saved.file, applied },
      };
    },
  },
  sessions: {
    usage: "/sessions",
    description: "recent chat sessions",
    run: async (runtime) => {
      const page = await runtime.stores.sessions.listSessions({ agent: CHAT_AGENT, limit: 20 });
      const rows = page.sessions.map((record) => {
        const mark = record.id === runtime.session.id ? "*" : " ";
        return `${mark} ${record.id}  ${record.updatedAt.slice(0, 16).replace("T", " ")}  ${record.turnCount} turns  ${record.title ?? ""}`.trimEnd();
      });
      return {
        text: rows.length === 0 ? "no saved chat sessions yet" : rows.join("\n"),
        data: page.sessions.map((record) => ({
          id: record.id,
          title: record.title ?? null,
          turns: record.turnCount,
          updatedAt: record.updatedAt,
        })),
      };
    },
  },
  resume: {
    usage: "/resume <id>",
    description: "continue another saved session",
    run: async (runtime, args) => {
      const record = await requireSession(runtime, requireArgument(args, "/resume <id>"));
      runtime.switchTo(record.id);
      return {
        text: `resumed ${record.id} (${record.turnCount} turns)${record.title === undefined ? "" : `: ${record.title}`}`,
        data: { sessionId: record.id, turns: record.turnCount },
      };
    },
  },
  fork: {
    usage: "/fork",
    description: "continue in a copy of this session (the original stays as it is)",
    run: async (runtime): Promise<CommandResult> => {
      const last = (await runtime.session.history()).at(-1);
      if (
        last === undefined ||
        (await runtime.stores.sessions.getSession(runtime.session.id)) === undefined
      ) {
        return { text: "nothing to fork yet", data: { forked: false } };
      }
      const from = runtime.session.id;
      const fork = await runtime.stores.sessions.forkSession(from, { atSeq: last.seq });
      runtime.switchTo(fork.id);
      return {
        text: `forked ${from} into ${fork.id}; now in ${fork.id}`,
        data: { from, sessionId: fork.id },
      };
    },
  },
  delete: {
    usage: "/delete <id>",
    description: "delete a saved session (deleting this one starts a new session)",
    run: async (runtime, args) => {
      const id = requireArgument(args, "/delete <id>");
      if (!(await runtime.stores.sessions.deleteSession(id)))
        throw new NotFoundError("session", id, sessionHint);
      let text = `deleted ${id}`;
      if (id === runtime.session.id) {
        const fresh = runtime.switchTo(runtime.engine.settings.ids("ses"));
        text += `; now in new session ${fresh.id}`;
      }
      return { text, data: { deleted: id, sessionId: runtime.session.id } };
    },
  },
  export: {
    usage: "/export [file]",
    description: "write this session as ctxkit JSONL (default <session>.ctxkit.jsonl)",
    run: async (runtime, args) => {
      const id = runtime.session.id;
      await requireSession(runtime, id);
      const file = resolve(runtime.location.cwd ?? process.cwd(), args === "" ? `${id}.ctxkit.jsonl` : args);
      writeFileSync(file, await exportSessionsJsonl(runtime.stores.sessions, [id]));
      return { text: `exported ${id} to ${file}`, data: { sessionId: id, file } };
    },
  },
  memory: {
    usage: "/memory [query]",
    description: "long-term memories: the newest, or those matching a query",
    run: async (runtime, args) => {
      const store = runtime.stores.memories;
      if (store === undefined) {
        return { text: "long-term memory is off (setting memory.enabled)", data: [] };
      }
      const limit = runtime.settings.memory.recallLimit;
      const found =
        args === ""
          ? (await store.list({ limit: Math.max(limit, 10) })).map((memory) => ({
              memory,
              text: memory.content,
            }))
          : (await store.search(args, { limit })).map((hit) => ({ memory: hit.memory, text: hit.snippet }));
      const lines = found.map(
        ({ memory, text }) => `${memory.id}  ${memory.kind}  ${text.replace(/\s+/g, " ").slice(0, 160)}`,
      );
      const none = args === "" ? "no memories yet" : `no memories match "${args}"`;
      return {
        text: lines.length === 0 ? none : lines.join("\n"),
        data: found.map(({ memory }) => ({ id: memory.id, kind: memory.kind, content: memory.content })),
      };
    },
  },
  help: {
    usage: "/help",
    description: "this list",
    run: () => Promise.resolve(helpResult()),
  },
  exit: {
    usage: "/exit",
    description: "save and leave (also Ctrl-D, or Ctrl-C at the prompt)",
    run: () => Promise.resolve({ text: "", data: null, exit: true }),
  },
};

function helpResult(): CommandResult {
  const width = Math.max(...Object.values(commands).map((command) => command.usage.length));
  const lines = Object.values(commands).map(
    (command) => `${command.usage.padEnd(width)}  ${command.description}`,
  );
  lines.push("", "Ctrl-C during a reply interrupts it (the turn is removed).");
  return {
    text: lines.join("\n"),
    data: Object.values(commands).map((command) => ({
      usage: command.usage,
      description: command.description,
    })),
  };
}

/** True when an input line is a slash command (`/name …`), not a message to the model. */
export function isSlashCommand(line: string): boolean {
  return /^\/[a-z]/i.test(line.trim());
}

/**
 * Runs a slash command line (`/compact focus on the tests`). Unknown commands and bad arguments throw
 * `ValidationError`; an unknown session id throws `NotFoundError`.
 *
 * @example
 * const result = await runSlashCommand(runtime, "/context");
 * output.emit({ type: "command", name: "context", ...result });
 */
export async function runSlashCommand(
  runtime: ChatRuntime,
  line: string,
): Promise<CommandResult & { name: string }> {
  const match = /^\/(\S+)\s*([\s\S]*)$/.exec(line.trim());
  const name = (match?.[1] ?? "").toLowerCase();
  const aliases: Record<string, string> = { quit: "exit", "?": "help" };
  const command = commands[aliases[name] ?? name];
  if (command === undefined) throw new ValidationError(`unknown command /${name}; /help lists the commands`);
  return { name: aliases[name] ?? name, ...(await command.run(runtime, (match?.[2] ?? "").trim())) };
}
