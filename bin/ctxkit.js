#!/usr/bin/env node
// Runs the built CLI; in a source checkout without a build, runs the TypeScript source directly (Node >= 22.18).
import { existsSync } from "node:fs";

const built = new URL("../dist/cli/bin.js", import.meta.url);
const source = new URL("../src/cli/bin.ts", import.meta.url);
await import(existsSync(built) ? built.href : source.href);
