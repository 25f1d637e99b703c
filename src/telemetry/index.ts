/**
 * `ctxkit/otel`: governance events and store operations as OpenTelemetry spans and metrics. Needs
 * `@opentelemetry/api` (an optional peer dependency); without a registered SDK everything is a no-op.
 */
export * from "./governance-telemetry.ts";
export * from "./instrument-store.ts";
export { TELEMETRY_SCOPE, type TelemetryOptions } from "./telemetry-options.ts";
