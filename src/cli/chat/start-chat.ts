import { loadSettings, type LoadSettingsOptions } from "../../config/load-settings.ts";
import { CtxkitError } from "../../errors/ctxkit-error.ts";
import { NotFoundError } from "../../errors/errors.ts";
import { redactSecrets } from "../../errors/redact-secrets.ts";
import { resolveConfiguredModels } from "../../providers/resolve-configured-models.ts";
import type { SessionStore } from "../../store/session-store.ts";
import type { CliIo } from "../program.ts";
import { runChatLoop, errorEvent } from "./chat-loop.ts";
import { createChatOutput } from "./chat-output.ts";
import { loadPipelineModule } from "../pipeline-module.ts";
import { CHAT_AGENT, createChatEngine } from "./chat-engine.ts";
import { ChatRuntime } from "./chat-runtime.ts";
import { chooseDatabase, openStores } from "../open-stores.ts";

/** The flags of `ctxkit chat`. */
export interface ChatFlags {
  /** `--resume` alone (true) continues the latest chat session; with an id, that session. */
  readonly resume?: string | true;
  /** `provider:model`, overriding the `model` setting. */
  readonly model?: string;
  readonly sessionTitle?: string;
  readonly json?: boolean;
  /** PostgreSQL URL, overriding `pgUrl` / CTXKIT_PG_URL. */
  readonly pg?: string;
  /** SQLite file, overriding `db` / CTXKIT_DB. */
  readonly db?: string;
  /** A module whose default export is the governance pipeline, or a function of the preset's making one. */
  readonly pipeline?: string;
}

/** Where the chat reads input and settings from; tests give a sandbox. */
export interface ChatEnvironment {
  readonly io: CliIo;
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly cwd: string;
  readonly home: string;
  /** First backoff delay of provider retries. Default 1,000 ms. */
  readonly retryBaseDelayMs?: number;
}

async function chosenSessionId(
  store: SessionStore,
  resume: string | true | undefined,
  newId: () => string,
): Promise<string> {
  if (resume === undefined) return newId();
  if (resume === true) {
    const latest = await store.latestSession({ agent: CHAT_AGENT });
    if (latest === undefined) {
      throw new CtxkitError("not_found", "no saved chat session to resume; start one with: ctxkit chat");
    }
    return latest.id;
  }
  if ((await store.getSession(resume)) === undefined) {
    throw new NotFoundError("session", resume, "see the saved ones with /sessions in ctxkit chat");
  }
  return resume;
}

/** The options of this run a resume needs too: the database it used and the model it was asked for. */
function resumeArguments(flags: ChatFlags): string[] {
  return [
    ...(flags.db !== undefined ? ["--db", flags.db] : []),
    ...(flags.pg !== undefined ? ["--pg", redactSecrets(flags.pg)] : []),
    ...(flags.model !== undefined ? ["--model", flags.model] : []),
  ];
}

/**
 * `ctxkit chat`: loads the settings, resolves the model, opens the stores, picks the session (new, latest, or
 * the one asked for) and runs the chat until the user leaves. An error that ends the chat is thrown
 * after the session is saved (the CLI prints it as one line with its exit code).
 *
 * @example
 * await runChat({ resume: true }, { io, stdin: process.stdin, cwd: process.cwd(), home: os.homedir() });
 */
export async function runChat(flags: ChatFlags, environment: ChatEnvironment): Promise<void> {
  const { io } = environment;
  const location: LoadSettingsOptions = { cwd: environment.cwd, env: io.env, home: environment.home };
  const { settings } = loadSettings(location);
  const spec = flags.model ?? settings.model ?? "";
  const models = await resolveConfiguredModels({ ...settings, model: spec }, { env: io.env });
  const json = flags.json === true;
  const output = createChatOutput(io, {
    json,
    interactive: !json && environment.stdin.isTTY === true && io.stdout.isTTY === true,
    resumeArguments: resumeArguments(flags),
  });
  const stores = await openStores(chooseDatabase(flags, settings), {
    memory: settings.memory.enabled,
  });
  let fatal: Error | undefined;
  let runtime: ChatRuntime | undefined;
  try {
    const pipeline =
      flags.pipeline === undefined ? undefined : await loadPipelineModule(flags.pipeline, environment.cwd);
    const engine = await createChatEngine({
      settings,
      models,
      stores,
      output,
      ...(flags.sessionTitle !== undefined && { sessionTitle: flags.sessionTitle }),
      ...(pipeline !== undefined && { pipeline }),
    });
    const sessionId = await chosenSessionId(stores.sessions, flags.resume, () => engine.settings.ids("ses"));
    let record = await stores.sessions.getSession(sessionId);
    if (record !== undefined && flags.sessionTitle !== undefined) {
      record = await stores.sessions.renameSession(sessionId, flags.sessionTitle);
    }
    runtime = new ChatRuntime({
      engine,
      stores,
      model: models.model,
      modelSpec: spec,
      settings,
      ...(flags.sessionTitle !== undefined && { sessionTitle: flags.sessionTitle }),
      ...(pipeline !== undefined && { pipeline }),
      output,
      location,
      sessionId,
      ...(environment.retryBaseDelayMs !== undefined && { retryBaseDelayMs: environment.retryBaseDelayMs }),
    });
    output.emit({
      type: "ready",
      sessionId,
      resumed: record !== undefined,
      turns: record?.turnCount ?? 0,
      model: runtime.modelName,
      store: stores.location,
    });
    fatal = await runChatLoop(runtime, environment.stdin, io);
    if (fatal !== undefined && json) output.emit(errorEvent(fatal));
    const current = runtime.session.id;
    const saved = (await stores.sessions.getSession(current)) !== undefined;
    output.emit({ type: "exit", sessionId: current, saved });
  } finally {
    await stores.close();
  }
  if (fatal !== undefined) throw fatal;
}
