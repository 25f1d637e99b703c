import type { GovernancePipeline } from "../../governance/pipeline.ts";
import { InMemoryMemoryStore } from "../../memory/in-memory-memory-store.ts";
import { MemorySessionStore } from "../../store/memory/index.ts";
import type { SessionStore } from "../../store/session-store.ts";
import { FakeSummarizer } from "../../test/fake-summarizer.ts";
import { FakeTokenCounter } from "../../test/fake-token-counter.ts";
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
  type FakeOpenAIServerOptions,
} from "../../test/fake-openai-server.ts";
import { MemoryKeyStore } from "../auth/memory-key-store.ts";
import { startServer, type RunningServer, type StartServerOptions } from "../start-server.ts";

/**
 * A server on 127.0.0.1 (random port) over a scripted upstream, with a key for tenants `acme` and `globex`, and an
 * operator's key (tenant `monitoring`, with the `metrics` permission).
 */
export interface ServerHarness {
  readonly server: RunningServer;
  readonly upstream: FakeOpenAIServer;
  readonly store: SessionStore;
  readonly memory: InMemoryMemoryStore;
  readonly keys: MemoryKeyStore;
  /** Keys of tenant `acme` and tenant `globex`. */
  readonly acme: string;
  readonly globex: string;
  /** Key of tenant `monitoring` with the `metrics` permission: the one that may read `/metrics`. */
  readonly operator: string;
  /** Log lines the server wrote. */
  readonly logs: string[];
  /** `fetch` against the server with a key (JSON body and content type set when `json` is given). */
  call(path: string, init?: RequestInit & { key?: string | null; json?: unknown }): Promise<Response>;
  close(): Promise<void>;
}

/** Options of `startHarness`. */
export interface HarnessOptions {
  readonly responses?: FakeOpenAIServerOptions["responses"];
  readonly store?: SessionStore;
  readonly contextWindow?: number;
  /** The engine's governance pipeline (what replays in the inspector use too). */
  readonly pipeline?: GovernancePipeline;
  readonly server?: Partial<StartServerOptions>;
}

/**
 * Starts a server for a test: in-memory store and memory, fake token counter and summarizer, a small window
 * (default 16,000 tokens), and the scripted upstream (OpenAI-compatible, and Anthropic's Messages API with the
 * request's model).
 *
 * @example
 * const harness = await startHarness({ responses: ["Hello!"] });
 * try { … } finally { await harness.close(); }
 */
export async function startHarness(options: HarnessOptions = {}): Promise<ServerHarness> {
  const upstream = await startFakeOpenAIServer({ responses: options.responses ?? [] });
  const store = options.store ?? new MemorySessionStore();
  const memory = new InMemoryMemoryStore();
  const keys = new MemoryKeyStore();
  const acme = (await keys.create("acme")).key;
  const globex = (await keys.create("globex")).key;
  const operator = (await keys.create("monitoring", "prometheus", undefined, ["metrics"])).key;
  const logs: string[] = [];
  const server = await startServer({
    store,
    memory,
    keys,
    port: 0,
    upstream: { baseURL: upstream.url, apiKey: "sk-upstream-secret-0123456789", model: "fake-model" },
    anthropicUpstream: {
      baseURL: upstream.url,
      apiKey: "sk-ant-upstream-secret-0123456789",
      auth: "x-api-key",
    },
    engine: {
      contextWindow: options.contextWindow ?? 16_000,
      maxOutputTokens: 2_000,
      tokenCounter: new FakeTokenCounter(),
      summarizer: new FakeSummarizer(),
      ...(options.pipeline !== undefined && { pipeline: options.pipeline }),
    },
    log: (line) => logs.push(line),
    webRoot: false,
    ...options.server,
  });
  return {
    server,
    upstream,
    store,
    memory,
    keys,
    acme,
    globex,
    operator,
    logs,
    call: (path, init = {}) => {
      const { key = acme, json, ...rest } = init;
      const headers = new Headers(rest.headers);
      if (key !== null) headers.set("authorization", `Bearer ${key}`);
      if (json !== undefined) headers.set("content-type", "application/json");
      return fetch(`${server.url}${path}`, {
        ...rest,
        headers,
        ...(json !== undefined && { body: JSON.stringify(json) }),
      });
    },
    close: async () => {
      await server.close();
      await upstream.close();
    },
  };
}
