// OpenTelemetry traces (the official SDK), on when OTEL_EXPORTER_OTLP_ENDPOINT is set: spans go to
// `<endpoint>/v1/traces` over OTLP/HTTP (JSON). One trace follows a run: the api's request span, the Temporal
// client's StartWorkflow span (its context travels in the workflow's headers), the workflow's spans and its
// activities' spans (@temporalio/interceptors-opentelemetry), and the user process, which gets TRACEPARENT.
// Off, nothing here costs more than a boolean check.
import {
  context,
  propagation,
  trace,
  isSpanContextValid,
  SpanKind,
  SpanStatusCode,
  type Attributes,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Middleware } from 'koa';

export interface Tracing {
  resource: Resource;
  spanProcessor: SpanProcessor;
  /** Flushes the spans still buffered and stops exporting. */
  shutdown(): Promise<void>;
}

let enabled = false;

/** True once `startTracing` has installed a provider in this process. */
export const tracingEnabled = () => enabled;

/**
 * Installs the process's tracer provider (global: context manager, W3C trace-context propagator) exporting to
 * `endpoint`; undefined when no endpoint is configured.
 */
export function startTracing(opts: { endpoint: string | undefined; serviceName: string }): Tracing | undefined {
  if (!opts.endpoint) return undefined;
  const resource = new Resource({ 'service.name': opts.serviceName });
  const spanProcessor = new BatchSpanProcessor(
    new OTLPTraceExporter({ url: `${opts.endpoint.replace(/\/+$/, '')}/v1/traces` }),
    { scheduledDelayMillis: 1000 },
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
  provider.register();
  enabled = true;
  return { resource, spanProcessor, shutdown: () => provider.shutdown() };
}

const tracer = () => trace.getTracer('tarmac');

/**
 * Koa middleware: one SERVER span per request, a child of the caller's `traceparent` if any, named by the
 * route template once routing has run (`POST /api/structures/:structure_id/runs`), active while it is handled.
 */
export function traceRequests(): Middleware {
  return async (ctx, next) => {
    if (!enabled) return next();
    const parent = propagation.extract(context.active(), ctx.headers);
    const span = tracer().startSpan(
      ctx.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method } },
      parent,
    );
    try {
      await context.with(trace.setSpan(parent, span), next);
    } finally {
      const route = (ctx as { _matchedRoute?: string })._matchedRoute;
      if (route) span.updateName(`${ctx.method} ${route}`).setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}

/** Adds attributes to the active span (the request's, the activity's), if tracing. */
export function setSpanAttributes(attributes: Attributes): void {
  if (enabled) trace.getActiveSpan()?.setAttributes(attributes);
}

/** Names the record a request or activity works on: its kind and id, its organization, and the run id of runs. */
export function tagActiveSpan(resource: { kind: string; id: string; organizationId?: string }): void {
  if (!enabled) return;
  setSpanAttributes({
    'tarmac.resource_kind': resource.kind,
    'tarmac.resource_id': resource.id,
    ...(resource.kind.endsWith('-run') ? { 'tarmac.run_id': resource.id } : {}),
    ...(resource.organizationId ? { 'tarmac.organization_id': resource.organizationId } : {}),
  });
}

/** The W3C `traceparent` of the active span (for user processes), or undefined when not tracing. */
export function currentTraceparent(): string | undefined {
  if (!enabled) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** `trace_id`/`span_id` of the active span, for log lines (the pino mixin of logger.ts). */
export function traceIds(): { trace_id?: string; span_id?: string } {
  if (!enabled) return {};
  const sc = trace.getActiveSpan()?.spanContext();
  return sc && isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}
