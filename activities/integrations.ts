// Activities of the integration delivery workflow (integration-delivery-<uuid>): thin adapters over
// src/services/integrations/ (delivery-work.ts: the terminal write and what a delivery starts; chat-answers.ts:
// the assistants' answers posted back). Here: the wait for the assistant runs (the kernel's awaitEnd), and a provider's
// failure turned into the ApplicationFailure the workflow reads.
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { ActivityDeps } from './deps';
import type { DeliveryStatus } from '../src/persistence/entities/integration';
import { postChatAnswers } from '../src/services/integrations/chat-answers';
import { startDelivery } from '../src/services/integrations/deliveries';
import { awaitEnd } from '../src/jobs/await-end';
import { finishJob } from '../src/jobs/finish';
import { INTEGRATION_DELIVERY, RUN_JOB } from '../src/jobs/kinds';
import {
  DeliveryStepFailure,
  startDeliveryWork,
  type DeliveryEnding,
  type DeliveryWork,
} from '../src/services/integrations/delivery-work';

/** A provider's failure as the workflow sees it (retried, or the step's end); other errors as they are. */
async function asActivityFailure<T>(step: Promise<T>): Promise<T> {
  try {
    return await step;
  } catch (err) {
    if (!(err instanceof DeliveryStepFailure)) throw err;
    throw err.retryable
      ? ApplicationFailure.retryable(err.message, err.type)
      : ApplicationFailure.nonRetryable(err.message, err.type);
  }
}

export function createIntegrationActivities(deps: ActivityDeps) {
  const { ds } = deps;

  return {
    /** QUEUED → RUNNING once the row committed (startDelivery); false when the delivery is gone or already ended. */
    async startIntegrationDelivery(input: { deliveryId: string }): Promise<boolean> {
      return startDelivery(ds, input.deliveryId);
    },

    /** Starts what the delivery asks for (idempotent: run ids derive from the delivery, deployments are reused). */
    async startDeliveryWork(input: { deliveryId: string }): Promise<DeliveryWork> {
      return asActivityFailure(startDeliveryWork(deps, input.deliveryId));
    },

    /** Waits (heartbeating) until every run has ended; a cancel stops the wait, not the runs. */
    async awaitAssistantRuns(input: { runIds: string[] }): Promise<void> {
      const ctx = Context.current();
      await awaitEnd(ds, RUN_JOB, input.runIds, {
        hub: deps.runUpdates,
        signal: ctx.cancellationSignal,
        heartbeat: () => ctx.heartbeat(),
      });
    },

    /** Posts each assistant's answer in the message's thread with the bot token (each answer once). */
    async postChatAnswers(input: { deliveryId: string }): Promise<void> {
      return asActivityFailure(postChatAnswers(deps, input.deliveryId));
    },

    /** The terminal write (guarded); answers the delivery's status. */
    async finishIntegrationDelivery(input: {
      deliveryId: string;
      ending: DeliveryEnding;
    }): Promise<DeliveryStatus | 'MISSING'> {
      return (await finishJob(ds, INTEGRATION_DELIVERY, input.deliveryId, input.ending)) as DeliveryStatus | 'MISSING';
    },
  };
}
