/**
 * The README, followed verbatim by a new user (issue 36): an empty project; the install commands of "Installing
 * the library" (the tarball in place of `/path/to/ctxkit-0.1.0.tgz`), those the quick start names and every other
 * `npm install` line of the README and docs/ (LangChain, Mastra, the Agents SDK, the Anthropic SDK), run as written
 * against the npm registry (npm's cache makes a repeat fast); then every TypeScript snippet of the README and docs/
 * compiled together with `strict` and `skipLibCheck: false` (a framework's own declaration errors are let through
 * only when it has the same ones compiled alone, without ctxkit); and the README's snippets run, one by one,
 * against a loopback fake of OpenAI's API (Chat Completions and Responses), as the README's users would run them
 * with `OPENAI_API_KEY` set. A snippet that drifts from the package (a renamed export, a changed option, a wrong
 * install line) fails the check. Fragments and snippets that import the reader's own files are listed, not compiled.
 */
import { execFile, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import type { FakeOpenAIResponse } from "../../src/test/fake-openai-responses.ts";
import { startFakeOpenAIServer, type FakeOpenAIRequest } from "../../src/test/fake-openai-server.ts";

const execFileAsync = promisify(execFile);

/** One ```ts block of a Markdown file. */
interface Snippet {
  readonly source: string;
  readonly code: string;
}

/** The fenced blocks of `language` in `markdown`. */
function blocks(markdown: string, language: string): string[] {
  const found: string[] = [];
  const fence = new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\`$`, "gm");
  for (const match of markdown.matchAll(fence)) found.push(match[1]!);
  return found;
}

/** The text of `## heading` up to the next `## `. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no "## ${heading}" section`);
  const end = markdown.indexOf("\n## ", start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/** The packages a snippet imports (bare specifiers, reduced to their package name). */
function packagesOf(code: string): string[] {
  const names = new Set<string>();
  for (const match of code.matchAll(/^import [^;]*? from "([^"]+)";/gm)) {
    const specifier = match[1]!;
    if (specifier.startsWith(".") || specifier.startsWith("node:") || builtinModules.includes(specifier))
      continue;
    const parts = specifier.split("/");
    names.add(specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0]!);
  }
  return [...names];
}

/**
 * What the fake model answers: a call of the request's first tool until a tool result came back, then text. The
 * arguments fit the README's tools (`read_file`'s path, `bash`'s command).
 */
function answer(request: FakeOpenAIRequest): FakeOpenAIResponse {
  const body = request.body;
  const items = Array.isArray(body.input) ? (body.input as { type?: string; role?: string }[]) : [];
  const messages = body.messages ?? [];
  const afterTool = messages.at(-1)?.role === "tool" || items.at(-1)?.type === "function_call_output";
  const tool = (body.tools ?? [])[0] as { name?: string; function?: { name?: string } } | undefined;
  const name = tool?.function?.name ?? tool?.name;
  if (name === undefined || afterTool) return { text: "Done." };
  return { toolCalls: [{ name, arguments: { path: "package.json", command: "ls" } }] };
}

/**
 * A consumer's tsconfig.json for `include`: strict, `skipLibCheck: false`, Node's types (from `typeRoots` when the
 * project has none of its own), no output.
 */
export function strictTsconfig(include: readonly string[], typeRoots?: readonly string[]): string {
  return JSON.stringify({
    compilerOptions: {
      target: "es2023",
      module: "nodenext",
      moduleResolution: "nodenext",
      strict: true,
      skipLibCheck: false,
      noEmit: true,
      types: ["node"],
      ...(typeRoots !== undefined && { typeRoots }),
    },
    include,
  });
}

/**
 * Runs the README as a new user would, in `directory` (created), with ctxkit from `tarball`.
 *
 * @example
 * await checkReadmeConsumer(root, "/tmp/ctxkit-0.1.0.tgz", "/tmp/readme-consumer");
 */
export async function checkReadmeConsumer(root: string, tarball: string, directory: string): Promise<void> {
  const readme = readFileSync(join(root, "README.md"), "utf8");
  mkdirSync(directory, { recursive: true });
  writeFileSync(
    join(directory, "package.json"),
    JSON.stringify({ name: "readme-consumer", type: "module", private: true }),
  );
  const npmEnv = {
    ...process.env,
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    npm_config_prefer_offline: "true",
  };

  // The install lines as written (the first one builds the tarball in the repository: done already).
  const install = section(readme, "Installing the library");
  const lines = blocks(install, "sh")[0]!
    .split("\n")
    .map((line) => line.replace(/\s+#.*$/, "").trim())
    .filter((line) => line !== "" && !line.includes("npm pack"));
  const quickStart = section(readme, "Quick start (library)");
  lines.push(...[...quickStart.matchAll(/`(npm install [^`]+)`/g)].map((match) => match[1]!));
  // And every other install line a reader meets: the README's integration sections and the docs/ pages (LangChain,
  // Mastra, the Agents SDK, the Anthropic SDK). A line chained with `&&` is run in this repository, not a project.
  const pages = [
    readme.replace(install, ""),
    ...readdirSync(join(root, "docs"))
      .filter((name) => name.endsWith(".md"))
      .sort()
      .map((file) => readFileSync(join(root, "docs", file), "utf8")),
  ];
  for (const page of pages)
    for (const block of blocks(page, "sh"))
      for (const line of block.split("\n").map((text) => text.replace(/\s+#.*$/, "").trim()))
        if (line.startsWith("npm install ") && !line.includes("&&") && !lines.includes(line))
          lines.push(line);
  if (!lines.some((line) => line.includes("/path/to/ctxkit-0.1.0.tgz")))
    throw new Error("README's install lines no longer install the tarball at /path/to/ctxkit-0.1.0.tgz");
  for (const line of lines) {
    const [command, ...args] = line.replace("/path/to/ctxkit-0.1.0.tgz", tarball).split(/\s+/);
    if (command !== "npm") throw new Error(`README install line is not an npm command: ${line}`);
    const run = spawnSync("npm", args, { cwd: directory, env: npmEnv, encoding: "utf8" });
    if (run.status !== 0) throw new Error(`README: \`${line}\` failed:\n${run.stdout}${run.stderr}`);
    if (line.includes(".tgz") && /install script|prepare/i.test(run.stderr))
      throw new Error(`installing the tarball warns about its scripts:\n${run.stderr}`);
  }
  console.log(`README consumer: ran its ${lines.length} install lines`);

  // Every snippet whose packages are installed, compiled together.
  const installed = (name: string) => existsSync(join(directory, "node_modules", name, "package.json"));
  const snippets: Snippet[] = blocks(readme, "ts").map((code, index) => ({
    source: `README.md #${index + 1}`,
    code,
  }));
  for (const file of readdirSync(join(root, "docs"))
    .filter((name) => name.endsWith(".md"))
    .sort()) {
    const markdown = readFileSync(join(root, "docs", file), "utf8");
    snippets.push(
      ...blocks(markdown, "ts").map((code, index) => ({ source: `docs/${file} #${index + 1}`, code })),
    );
  }
  const compiled: { snippet: Snippet; file: string }[] = [];
  const skipped: string[] = [];
  for (const snippet of snippets) {
    const missing = packagesOf(snippet.code).filter((name) => !installed(name));
    // A fragment (no import) or one that needs a package the README does not install.
    const local = /^import [^;]*? from "\.{1,2}\//m.test(snippet.code);
    if (!/^import /m.test(snippet.code) || missing.length > 0 || local) {
      const why =
        missing.length > 0
          ? `needs ${missing.join(", ")}`
          : local
            ? "imports the reader's own file"
            : "fragment";
      skipped.push(`${snippet.source} (${why})`);
      continue;
    }
    const file = `snippet-${compiled.length + 1}.ts`;
    writeFileSync(join(directory, file), `// ${snippet.source}\n${snippet.code}\nexport {};\n`);
    compiled.push({ snippet, file });
  }
  const tsc7 = join(root, "node_modules", "typescript-7", "bin", "tsc");
  /** tsc's error lines for `files`, compiled together strictly with `skipLibCheck: false`. */
  const compile = (project: string, files: readonly string[]) => {
    writeFileSync(join(directory, project), strictTsconfig(files, [join(root, "node_modules", "@types")]));
    const run = spawnSync(process.execPath, [tsc7, "-p", project], { cwd: directory, encoding: "utf8" });
    if (run.status !== 0 && !/error TS/.test(run.stdout))
      throw new Error(`tsc -p ${project} failed without an error list:\n${run.stdout}${run.stderr}`);
    return run.stdout.split("\n").filter((line) => /error TS\d+/.test(line));
  };

  // Some frameworks ship declarations that fail under `skipLibCheck: false` on their own (the docs say which).
  // Their errors are let through only if the same ones appear when the framework's modules are compiled alone,
  // without ctxkit: an error that ctxkit's types cause, or one in ctxkit's own files, still fails.
  const frameworkModules = new Set<string>();
  for (const { snippet } of compiled)
    for (const match of snippet.code.matchAll(/^import [^;]*? from "([^"]+)";/gm))
      if (!match[1]!.startsWith("ctxkit") && !match[1]!.startsWith("node:")) frameworkModules.add(match[1]!);
  writeFileSync(
    join(directory, "frameworks-alone.ts"),
    [...frameworkModules].map((name, index) => `import type * as m${index} from "${name}";\n`).join("") +
      "export {};\n",
  );
  const alone = new Set(compile("tsconfig.frameworks.json", ["frameworks-alone.ts"]));
  const theirs = [...alone].filter((line) => line.startsWith("node_modules/"));
  if (theirs.length !== alone.size)
    throw new Error(`the frameworks' modules alone do not compile:\n${[...alone].join("\n")}`);

  // A docs snippet may be an excerpt that uses names the reader's program defines (`store`, `view`): those are
  // the only errors let through, and only in docs/ (the README's snippets are whole programs). Any other error —
  // a missing export, an unknown option, a wrong type, an error in ctxkit's declarations — fails.
  const excerptErrors = /error TS(2304|2552|18004):/;
  const found = compile(
    "tsconfig.json",
    compiled.map(({ file }) => file),
  ).filter((line) => !alone.has(line) || line.startsWith("node_modules/ctxkit/"));
  const excerpts = new Set(
    found.filter((line) => excerptErrors.test(line)).map((line) => line.slice(0, line.indexOf("("))),
  );
  const errors = found
    .map((line) =>
      line.replace(
        /^snippet-(\d+)\.ts/,
        (file, n: string) => `${file} (${compiled[Number(n) - 1]!.snippet.source})`,
      ),
    )
    .filter((line) => !(line.includes("(docs/") && excerptErrors.test(line)));
  if (errors.length > 0)
    throw new Error(`README/docs snippets do not compile with skipLibCheck: false:\n${errors.join("\n")}`);
  const owners = new Set(theirs.map((line) => /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(line)![1]!));
  console.log(
    `README consumer: ${theirs.length} errors in the declarations of ${[...owners].join(", ") || "no framework"} alone (tolerated)`,
  );
  console.log(
    `README consumer: ${compiled.length} snippets compile with skipLibCheck: false; not compiled: ${skipped.join("; ")}`,
  );

  // The README's snippets and the docs' whole programs (not excerpts; not those that need a PostgreSQL server),
  // run against the fake OpenAI on loopback.
  const programs = compiled.filter(
    ({ snippet, file }) =>
      snippet.source.startsWith("README") ||
      (!excerpts.has(file) &&
        !packagesOf(snippet.code).some((name) => name === "pg") &&
        !/ctxkit\/postgres/.test(snippet.code)),
  );
  const fake = await startFakeOpenAIServer({ responses: answer });
  try {
    for (const { snippet, file } of programs) {
      const before = fake.requests.length;
      // Asynchronously: the fake answers from this process's event loop.
      await execFileAsync(process.execPath, [file], {
        cwd: directory,
        encoding: "utf8",
        timeout: 60_000,
        env: {
          PATH: process.env["PATH"],
          HOME: directory,
          OPENAI_API_KEY: "sk-readme-test",
          OPENAI_BASE_URL: fake.url,
        },
      }).catch((error: { code?: unknown; stdout?: string; stderr?: string }) => {
        throw new Error(
          `${snippet.source} (${file}) failed (exit ${String(error.code)}):\n${error.stdout ?? ""}${error.stderr ?? ""}`,
        );
      });
      // A docs program may only build something (a client, a store); the README's and the agents' talk to the model.
      const agent = packagesOf(snippet.code).some((name) =>
        ["langchain", "@mastra/core", "@openai/agents"].includes(name),
      );
      if ((snippet.source.startsWith("README") || agent) && fake.requests.length === before)
        throw new Error(`${snippet.source} ran without calling the model`);
    }
  } finally {
    await fake.close();
  }
  console.log(
    `README consumer: ${programs.length} whole programs (${programs.map(({ snippet }) => snippet.source).join(", ")}) run against a loopback fake of OpenAI's API`,
  );
}
