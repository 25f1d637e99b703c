// A bench's `ctxkit serve` child process, as users deploy it: SQLite, API keys, the default limits.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { startListening, type ListeningProcess } from "./listening-process.ts";

/** A running `ctxkit serve` and the API key it accepts. */
export type ServeProcess = ListeningProcess & { readonly key: string };

/**
 * Starts `ctxkit serve` of `checkout` on a fresh database and key file in `folder`, with its default limits and
 * `extraArgs`, `nodeArgs` before the script (e.g. `--cpu-prof`), and `bin` as the script (default the checkout's
 * built CLI; its `src/cli/bin.ts` to run from source). `label` names the bench in errors.
 */
export async function startServe(options: {
  readonly checkout: string;
  readonly folder: string;
  readonly upstreamUrl: string;
  readonly label: string;
  readonly extraArgs?: readonly string[];
  readonly nodeArgs?: readonly string[];
  readonly bin?: string;
}): Promise<ServeProcess> {
  const { folder, label } = options;
  const bin = options.bin ?? join(options.checkout, "bin", "ctxkit.js");
  const env = { PATH: process.env["PATH"], HOME: folder, CTXKIT_UPSTREAM_API_KEY: "bench" };
  const keys = join(folder, "keys.json");
  const added = spawnSync(process.execPath, [bin, "serve", "keys", "add", "bench", "--keys", keys], {
    env,
    encoding: "utf8",
  });
  if (added.status !== 0) throw new Error(`${label}: keys add failed: ${added.stderr}`);
  const served = await startListening(
    [
      ...(options.nodeArgs ?? []),
      bin,
      "serve",
      "--port",
      "0",
      "--db",
      join(folder, "ctxkit.db"),
      "--keys",
      keys,
      "--upstream",
      options.upstreamUrl,
      ...(options.extraArgs ?? []),
    ],
    env,
    label,
  );
  return { ...served, key: added.stdout.trim() };
}
