import { MissingDependencyError } from "./errors.ts";

/**
 * Loads an optional peer dependency with `load` (a literal `import()`, so bundlers still see it); when the package
 * is not installed, throws `MissingDependencyError` naming it and the feature that needs it. Other failures (a
 * broken install) propagate as they are.
 *
 * @example
 * const { createOpenAI } = await optionalPeer("@ai-sdk/openai", "the openai: provider", () => import("@ai-sdk/openai"));
 */
export async function optionalPeer<T>(
  packageName: string,
  feature: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    const missing =
      (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") &&
      String((error as Error).message).includes(packageName);
    if (missing) throw new MissingDependencyError(packageName, feature, { cause: error });
    throw error;
  }
}
