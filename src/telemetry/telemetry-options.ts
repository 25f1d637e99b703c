import { metrics, trace, type Meter, type Tracer } from "@opentelemetry/api";

/** Options of `ctxkitTelemetry` and `instrumentStore`. */
export interface TelemetryOptions {
  /** The tracer spans go to. Default: `trace.getTracer("ctxkit")` (a no-op until an SDK is registered). */
  tracer?: Tracer;
  /** The meter metrics go to. Default: `metrics.getMeter("ctxkit")` (a no-op until an SDK is registered). */
  meter?: Meter;
  /** Names this use of ctxkit in every span (`ctxkit.telemetry.functionId`, `operation.name`), as the AI SDK's. */
  functionId?: string;
}

/** The scope name of ctxkit's tracer and meter. */
export const TELEMETRY_SCOPE = "ctxkit";

export function tracerOf(options: TelemetryOptions): Tracer {
  return options.tracer ?? trace.getTracer(TELEMETRY_SCOPE);
}

export function meterOf(options: TelemetryOptions): Meter {
  return options.meter ?? metrics.getMeter(TELEMETRY_SCOPE);
}

/**
 * The attributes every ctxkit span carries, as the AI SDK names its own (`operation.name`, `ai.operationId`,
 * `ai.telemetry.functionId`).
 */
export function operationAttributes(operationId: string, options: TelemetryOptions): Record<string, string> {
  return {
    "operation.name": options.functionId === undefined ? operationId : `${operationId} ${options.functionId}`,
    "ctxkit.operationId": operationId,
    ...(options.functionId !== undefined && { "ctxkit.telemetry.functionId": options.functionId }),
  };
}
