/**
 * A real headless Chromium for browser tests, without a system install: the `@sparticuz/chromium` devDependency
 * ships a Chromium build with its graphics, NSS and font libraries as Brotli archives inside the npm package. They
 * are unpacked once per package version into a folder of the temporary directory (atomically, so concurrent runs
 * never see half a binary) and reused after that. `CTXKIT_TEST_CHROMIUM` names another executable instead.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { brotliDecompressSync } from "node:zlib";

/** What `playwright-core`'s `chromium.launch()` needs to start the browser. */
export interface ChromiumLaunch {
  readonly executablePath: string;
  readonly args: string[];
  readonly env: Record<string, string | undefined>;
}

const ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"];

/**
 * Unpacks the package's archives into `folder` (renamed to `final` afterwards): the binary, swiftshader beside it,
 * al2023/lib (NSS), fonts/.
 */
function unpack(bin: string, folder: string, final: string): void {
  writeFileSync(join(folder, "chromium"), brotliDecompressSync(readFileSync(join(bin, "chromium.br"))));
  chmodSync(join(folder, "chromium"), 0o755);
  for (const [archive, into] of [
    ["swiftshader.tar.br", "."],
    ["al2023.tar.br", "al2023"],
    ["fonts.tar.br", "fonts"],
  ] as const) {
    const tar = spawnSync("tar", ["-x", "-C", join(folder, into), "--no-same-owner"], {
      input: brotliDecompressSync(readFileSync(join(bin, archive))),
      stdio: ["pipe", "ignore", "pipe"],
      encoding: "buffer",
      cwd: folder,
    });
    if (tar.status !== 0) throw new Error(`could not unpack ${archive}: ${tar.stderr?.toString()}`);
  }
  // The package's fonts.conf lists its own serverless paths; point fontconfig at the unpacked fonts instead.
  writeFileSync(
    join(folder, "fonts", "fonts.conf"),
    `<?xml version="1.0"?>\n<fontconfig><dir>${join(final, "fonts", "fonts")}</dir>` +
      `<cachedir>${join(final, "fonts", "cache")}</cachedir></fontconfig>\n`,
  );
}

/**
 * How to launch Chromium in tests.
 *
 * @example
 * const { executablePath, args, env } = chromiumForTests();
 * const browser = await chromium.launch({ executablePath, args, env });
 */
export function chromiumForTests(): ChromiumLaunch {
  const override = process.env["CTXKIT_TEST_CHROMIUM"];
  if (override) return { executablePath: override, args: ARGS, env: process.env };
  // The package exports only its entry point (build/cjs/index.cjs), so its folder is three levels up.
  const root = dirname(dirname(dirname(createRequire(import.meta.url).resolve("@sparticuz/chromium"))));
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  const folder = join(tmpdir(), `ctxkit-chromium-${version}-${process.getuid?.() ?? 0}`);
  if (!existsSync(folder)) {
    const staging = mkdtempSync(`${folder}.partial-`);
    try {
      for (const into of ["al2023", "fonts"]) mkdirSync(join(staging, into));
      unpack(join(root, "bin"), staging, folder);
      renameSync(staging, folder);
    } catch (error) {
      rmSync(staging, { recursive: true, force: true });
      if (!existsSync(folder)) throw error; // another run unpacked it first: use theirs
    }
  }
  return {
    executablePath: join(folder, "chromium"),
    args: ARGS,
    env: {
      ...process.env,
      LD_LIBRARY_PATH: [join(folder, "al2023", "lib"), folder].join(":"),
      FONTCONFIG_PATH: join(folder, "fonts"),
      HOME: folder,
    },
  };
}
