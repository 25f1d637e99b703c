// A worker thread of `runJobs` (policy-pool.ts): replays the jobs it is sent, one at a time.
import { parentPort } from "node:worker_threads";
import type { Message } from "../../src/model/message.ts";
import { createExactCounter } from "../../src/tokens/exact-counter.ts";
import type { TokenCounter } from "../../src/tokens/token-counter.ts";
import { benchPolicies, ctxkitPreset, type BenchPolicy } from "../policies/index.ts";
import { loadCorpusFile, type CorpusConversation } from "./corpus.ts";
import type { PolicyJob } from "./policy-pool.ts";
import { runPolicy } from "./policy-runs.ts";

const counter = memoised(await createExactCounter("o200k_base"));

/**
 * `inner` with each message counted once per worker: every replay's governor counts the same recorded messages
 * again (its cache is its own), and tokenising is most of a replay's work.
 */
function memoised(inner: TokenCounter): TokenCounter {
  const counts = new WeakMap<Message, number>();
  const countMessage = (message: Message) => {
    let count = counts.get(message);
    if (count === undefined) {
      count = inner.countMessage(message);
      counts.set(message, count);
    }
    return count;
  };
  return {
    name: inner.name,
    countText: (text) => inner.countText(text),
    countMessage,
    ...(inner.countTextAsync !== undefined && { countTextAsync: inner.countTextAsync.bind(inner) }),
    countMessageAsync: (message) => Promise.resolve(countMessage(message)),
  };
}
const files = new Map<string, Promise<CorpusConversation[]>>();

function policyOf(job: PolicyJob): BenchPolicy {
  if (job.preset !== undefined)
    return {
      kind: "governor",
      name: job.policyName,
      ...ctxkitPreset(job.preset.name, job.preset.options),
      ctxkit: true,
      window: job.window,
    };
  const policy = benchPolicies.find((candidate) => candidate.name === job.policyName);
  if (policy === undefined) throw new Error(`no bench policy named ${job.policyName}`);
  return policy;
}

async function replay(job: PolicyJob): Promise<void> {
  try {
    let file = files.get(job.session);
    if (file === undefined) {
      file = loadCorpusFile(counter, job.session);
      files.set(job.session, file);
    }
    const entry = (await file)[job.conversation]!;
    const result = await runPolicy(entry, policyOf(job), {
      window: job.window,
      fixedRoom: job.fixedRoom,
      counter,
      asRun: job.asRun,
    });
    parentPort!.postMessage({ result });
  } catch (error) {
    parentPort!.postMessage({
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
}

parentPort!.on("message", (job: PolicyJob) => void replay(job));
