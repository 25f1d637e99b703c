import { MissingDependencyError } from "../errors/errors.ts";
import { createEstimatingCounter, type EstimatingCounter } from "./estimating-counter.ts";
import { createExactCounter } from "./exact-counter.ts";
import type { ModelInfo } from "./model-info.ts";
import { defaultModelRegistry, type ModelRegistry } from "./model-registry.ts";
import type { TokenCounter } from "./token-counter.ts";
import { isExactEncoding, type ExactEncoding } from "./tokenizer-family.ts";

function modelInfo(model: string | ModelInfo, registry: ModelRegistry): ModelInfo {
  return typeof model === "string" ? registry.lookup(model) : model;
}

/**
 * The right counter for a model: exact (`gpt-tokenizer`, loaded on first use; one per encoding, shared by the
 * process) for OpenAI encodings, the calibrated estimator of the model's tokenizer family otherwise — and for OpenAI
 * encodings too when the optional `gpt-tokenizer` package is not installed (about 5% off per text; anchoring on
 * reported usage corrects totals).
 *
 * @example
 * const counter = await counterForModel("openai:gpt-4.1"); // counter.name === "o200k_base"
 * const claude = await counterForModel("claude-sonnet-4-5-20250929"); // "estimate:claude@1"
 */
export async function counterForModel(
  model: string | ModelInfo,
  registry: ModelRegistry = defaultModelRegistry,
): Promise<TokenCounter> {
  const family = modelInfo(model, registry).tokenizer;
  if (!isExactEncoding(family)) return createEstimatingCounter({ family });
  try {
    return await sharedExactCounter(family);
  } catch (error) {
    if (error instanceof MissingDependencyError) return createEstimatingCounter({ family });
    throw error;
  }
}

const sharedCounters = new Map<ExactEncoding, Promise<TokenCounter>>();

/**
 * One exact counter per encoding for the whole process: a server's engines (one per tenant) share the counts it
 * remembers, so their memory is bounded once, not once per tenant.
 */
function sharedExactCounter(encoding: ExactEncoding): Promise<TokenCounter> {
  let counter = sharedCounters.get(encoding);
  if (counter === undefined) {
    counter = createExactCounter(encoding);
    sharedCounters.set(encoding, counter);
    void counter.catch(() => sharedCounters.delete(encoding));
  }
  return counter;
}

/**
 * A synchronous estimator for a model (for OpenAI models, an approximation of their encoding that needs no
 * loading: about 5% off per text, 1–2% off in total).
 *
 * @example
 * estimatorForModel("qwen2.5-coder:7b").name; // "estimate:qwen@1"
 */
export function estimatorForModel(
  model: string | ModelInfo,
  registry: ModelRegistry = defaultModelRegistry,
): EstimatingCounter {
  return createEstimatingCounter({ family: modelInfo(model, registry).tokenizer });
}
