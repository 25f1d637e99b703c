/**
 * The smallest context window `ctxkit demo` accepts. Its largest single step (the instruction, the newest tool
 * output and the reserve for the reply, which governance never drops) needs about 830 tokens; below this the
 * run would stop part-way with a context overflow. `demo.test.ts` runs the demo at exactly this window.
 */
export const DEMO_MIN_WINDOW = 2_000;
