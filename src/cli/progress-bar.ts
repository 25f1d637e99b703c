import type { CliIo } from "./program.ts";

/**
 * A progress bar on stderr for long commands; silent when stderr is not a terminal (scripts, CI, pipes) or
 * NO_COLOR/CTXKIT_NO_PROGRESS is set. Redraws at most ~20 times per second.
 *
 * @example
 * const progress = progressBar(io, "replay");
 * for (...) progress.update(done, total);
 * progress.done();
 */
export function progressBar(
  io: CliIo,
  label: string,
): { update(done: number, total: number): void; done(): void } {
  const enabled = io.stderr.isTTY === true && io.env["CTXKIT_NO_PROGRESS"] === undefined;
  let lastDraw = 0;
  let drawn = false;
  return {
    update(done, total) {
      if (!enabled) return;
      const now = Date.now();
      if (now - lastDraw < 50 && done < total) return;
      lastDraw = now;
      const width = 30;
      const filled = total === 0 ? width : Math.round((done / total) * width);
      io.stderr.write(`\r${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}`);
      drawn = true;
    },
    done() {
      if (drawn) io.stderr.write("\n");
    },
  };
}
