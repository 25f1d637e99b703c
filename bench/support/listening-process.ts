// A bench's server child process: started with the bench's own Node, ready once it prints its address.
import { spawn } from "node:child_process";

/** A running child process that serves HTTP. */
export interface ListeningProcess {
  readonly url: string;
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `node args…` and waits until it prints `listening on <url>`; fails with what it printed on stderr if it
 * exits first. `label` names the bench in that error.
 */
export async function startListening(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  label: string,
): Promise<ListeningProcess> {
  const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<void>((done) => child.once("exit", () => done()));
  const url = await new Promise<string>((done, fail) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      const found = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      if (found !== undefined) done(found);
    });
    void exited.then(() => fail(new Error(`${label}: ${args.join(" ")} exited: ${stderr}`)));
  });
  return {
    url,
    pid: child.pid!,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
