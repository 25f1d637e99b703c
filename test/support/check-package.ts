/**
 * The package as npm would publish it (`npm pack`, from the `dist/` the build made), checked the way a consumer
 * meets it: publint (package.json fields, exports, files), arethetypeswrong (every subpath's types resolve;
 * ctxkit is ESM-only, so CommonJS `require` and node10 resolution are out of scope), the API report (API
 * Extractor: the root export's declarations must match etc/ctxkit.api.md), a consumer project that
 * imports every subpath export, compiles with `strict` and `skipLibCheck: false` and loads each subpath in Node,
 * and the packed CLI (`--help`, `sessions list`); then the README followed verbatim in an empty project
 * (readme-consumer.ts: its install lines against the tarball and the registry, its and docs/' snippets compiled
 * with `skipLibCheck: false`, the README's run against a loopback fake of OpenAI). Part of `npm test`.
 *
 * The consumer's dependencies are this repository's node_modules. `@mastra/core` ships declarations that do not
 * compile against the zod and AI SDK majors it resolves to (its own files, not ctxkit's): errors there are listed
 * and tolerated; any error in ctxkit's declarations or the consumer's file fails the check.
 */
import { execFileSync, spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkReadmeConsumer, strictTsconfig } from "./readme-consumer.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const bin = (tool: string) => join(root, "node_modules", ".bin", tool);
/** Every subpath the package exports ("" for the root), from package.json, so a new entry cannot be missed. */
const subpaths = Object.keys(
  (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, unknown> })
    .exports,
)
  .filter((path) => path !== "./package.json")
  .map((path) => path.slice(1));
/** Packages whose own declarations may fail under skipLibCheck: false (see above). */
const tolerated = ["node_modules/@mastra/"];

const directory = mkdtempSync(join(tmpdir(), "ctxkit-pack-"));
try {
  const tarball = execFileSync(
    "npm",
    // With its scripts: `prepack` takes `prepare` out of the packed package.json (scripts/pack-manifest.ts).
    ["pack", "--silent", "--pack-destination", directory],
    {
      cwd: root,
      encoding: "utf8",
    },
  )
    .trim()
    .split("\n")
    .at(-1)!;
  const packed = join(directory, tarball);
  const manifest = JSON.parse(
    execFileSync("tar", ["xzfO", packed, "package/package.json"], { encoding: "utf8" }),
  ) as {
    scripts?: Record<string, string>;
  };
  if (manifest.scripts?.["prepare"] !== undefined)
    throw new Error("the packed package.json keeps `prepare`: installing the tarball would warn about it");
  if (existsSync(join(root, "package.json.before-pack")))
    throw new Error("npm pack left package.json.before-pack: postpack did not restore package.json");
  execFileSync(bin("publint"), ["run", packed, "--strict"], { cwd: root, stdio: "inherit" });
  execFileSync(bin("attw"), [packed, "--profile", "esm-only", "--format", "table-flipped"], {
    cwd: root,
    stdio: "inherit",
  });

  // The public API of the root export against the committed report (etc/ctxkit.api.md): a change fails here until
  // `npm run api-report` updates the report, so every change to the surface shows up in review.
  execFileSync(bin("api-extractor"), ["run"], { cwd: root, stdio: "inherit" });

  // A consumer: ctxkit unpacked from the tarball, every other package linked from this repository.
  const consumer = join(directory, "consumer");
  const modules = join(consumer, "node_modules");
  mkdirSync(modules, { recursive: true });
  execFileSync("tar", ["xzf", packed, "-C", consumer]);
  execFileSync("mv", [join(consumer, "package"), join(modules, "ctxkit")]);
  for (const entry of readdirSync(join(root, "node_modules"))) {
    if (entry !== "ctxkit" && entry !== ".cache")
      symlinkSync(join(root, "node_modules", entry), join(modules, entry));
  }
  writeFileSync(
    join(consumer, "package.json"),
    JSON.stringify({ name: "consumer", type: "module", private: true }),
  );
  writeFileSync(join(consumer, "tsconfig.json"), strictTsconfig(["index.ts"]));
  writeFileSync(
    join(consumer, "index.ts"),
    subpaths.map((path, index) => `import * as module${index} from "ctxkit${path}";`).join("\n") +
      `\nexport const modules = [${subpaths.map((_, index) => `module${index}`).join(", ")}];\n`,
  );
  // TypeScript 7, what `npm install typescript` gives a consumer today (and a fraction of 5.9's CPU here).
  const tsc7 = join(root, "node_modules", "typescript-7", "bin", "tsc");
  const compiled = spawnSync(process.execPath, [tsc7, "-p", "tsconfig.json"], {
    cwd: consumer,
    encoding: "utf8",
  });
  const errors = compiled.stdout.split("\n").filter((line) => /error TS\d+/.test(line));
  const ours = errors.filter((line) => !tolerated.some((path) => line.includes(path)));
  const theirs = errors.length - ours.length;
  if (theirs > 0)
    console.log(`consumer (skipLibCheck: false): ${theirs} errors in @mastra/* declarations, tolerated`);
  if (ours.length > 0) {
    console.error(ours.join("\n"));
    throw new Error(`a consumer with skipLibCheck: false does not compile: ${ours.length} errors`);
  }
  console.log(`consumer (skipLibCheck: false) compiles every subpath export: ${subpaths.length} imports`);

  // The same subpaths loaded by Node from the unpacked package: each resolves to code that exports something,
  // the layers the root left out are where their subpaths say, and the root does not hold them.
  writeFileSync(
    join(consumer, "load.mjs"),
    `const loaded = {};\n` +
      `for (const path of ${JSON.stringify(subpaths)}) loaded[path] = Object.keys(await import("ctxkit" + path));\n` +
      `console.log(JSON.stringify(loaded));\n`,
  );
  const loaded = JSON.parse(
    execFileSync(process.execPath, ["load.mjs"], { cwd: consumer, encoding: "utf8" }),
  ) as Record<string, string[]>;
  const empty = subpaths.filter((path) => (loaded[path] ?? []).length === 0);
  if (empty.length > 0) throw new Error(`subpaths that load nothing: ${empty.join(", ")}`);
  const expected: Record<string, string> = {
    "/formats": "importTranscript",
    "/sync": "CliModel",
    "/tokens": "createEstimatingCounter",
    "/governance": "createGovernor",
  };
  for (const [path, name] of Object.entries(expected)) {
    if (!loaded[path]?.includes(name)) throw new Error(`ctxkit${path} does not export ${name}`);
    if (loaded[""]!.includes(name)) throw new Error(`the root export still holds ${name} (ctxkit${path})`);
  }
  console.log(`Node loads every subpath from the packed package: ${subpaths.length} imports`);

  // The CLI as installed: bin/ctxkit.js runs the bundle (dist/cli-bundle), its peers found in node_modules.
  const cli = (...args: string[]) =>
    execFileSync(process.execPath, [join(modules, "ctxkit", "bin", "ctxkit.js"), ...args], {
      cwd: consumer,
      encoding: "utf8",
      env: { PATH: process.env["PATH"], HOME: consumer },
    });
  if (!cli("--help").includes("Usage: ctxkit")) throw new Error("the packed CLI's --help printed no usage");
  // No database yet in this HOME: the list is empty and no database is created to say so.
  const listed = JSON.parse(cli("sessions", "list", "--json")) as { sessions: unknown[] };
  if (listed.sessions.length !== 0) throw new Error("the packed CLI listed sessions before any was stored");
  if (existsSync(join(consumer, ".ctxkit", "ctxkit.db")))
    throw new Error("the packed CLI created a database to list sessions");
  console.log("the packed CLI (bin/ctxkit.js → dist/cli-bundle) runs --help and sessions list");

  // The README followed verbatim: its install lines against the tarball, its and docs/' snippets compiled and run.
  await checkReadmeConsumer(root, packed, join(directory, "readme-consumer"));
} finally {
  rmSync(directory, { recursive: true, force: true });
}
