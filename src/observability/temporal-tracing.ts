// Temporal's half of a trace (@temporalio/interceptors-opentelemetry, the same version as the SDK): the client
// interceptor puts the active span's context in a started workflow's headers; the workflow interceptors (a
// module bundled with the workflows) continue it inside the workflow and pass it on to its activities, whose
// spans the activity interceptor opens. Workflow spans leave the sandbox through the `exporter` sink.
import type { ClientInterceptors } from '@temporalio/client';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';
import { tagActiveSpan, tracingEnabled, type Tracing } from './tracing';

/** The workflow interceptor module; a prebuilt bundle must include it (bundleWorkflowCode's workflowInterceptorModules). */
export const WORKFLOW_TRACING_MODULES = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/** A Temporal client's interceptors: the trace context goes along with every workflow start and signal. */
export function clientTracingInterceptors(): ClientInterceptors | undefined {
  return tracingEnabled() ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}

/** `structure-run-<uuid>` → the kind and id of the resource (workflow-start.ts's workflowIdOf). */
const resourceOf = (workflowId: string) => {
  const m = /^(.+)-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(workflowId);
  return m ? { kind: m[1], id: m[2] } : undefined;
};

/** What a worker adds to its options when tracing: interceptors and the workflow span sink. */
export function workerTracingOptions(
  tracing: Tracing | undefined,
): Pick<WorkerOptions, 'interceptors' | 'sinks'> | undefined {
  if (!tracing) return undefined;
  return {
    interceptors: {
      workflowModules: WORKFLOW_TRACING_MODULES,
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
        // Inside the activity's span: name the run (or job) it works for.
        (ctx) => ({
          inbound: {
            execute: (input, next) => {
              const workflowId = ctx.info.workflowExecution?.workflowId;
              const resource = workflowId ? resourceOf(workflowId) : undefined;
              if (resource) tagActiveSpan(resource);
              return next(input);
            },
          },
        }),
      ],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}
