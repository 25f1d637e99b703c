/**
 * `npm pack` packs package.json as it is on disk after `prepack`: `prepack` runs this with `strip`, which takes out
 * `prepare` (it builds a checkout, and in an installed tarball it would only make npm warn about install scripts),
 * and `postpack` runs it with `restore`. Both swap files by rename, so a reader never sees half a package.json; a
 * pack that died before `postpack` is undone by the next `strip`.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const manifest = fileURLToPath(new URL("../package.json", import.meta.url));
const saved = `${manifest}.before-pack`;

function restore(): void {
  if (existsSync(saved)) renameSync(saved, manifest);
}

const command = process.argv[2];
if (command === "strip") {
  restore();
  const text = readFileSync(manifest, "utf8");
  const packed = JSON.parse(text) as { scripts?: Record<string, string> };
  delete packed.scripts?.["prepare"];
  writeFileSync(saved, text);
  const next = `${manifest}.packed`;
  writeFileSync(next, `${JSON.stringify(packed, null, 2)}\n`);
  renameSync(next, manifest);
} else if (command === "restore") {
  restore();
} else {
  process.stderr.write("usage: node scripts/pack-manifest.ts strip|restore\n");
  process.exit(2);
}
