// The integration delivery workflow (id `integration-delivery-<uuid>`): the work of an accepted chatapp or
// codehost_app delivery, after the handler acknowledged it. RUNNING; start what the delivery asks for (runs of
// the linked structures and assistants, or the deployments a push asks for); for a chat message, wait for the
// assistants (a heartbeating activity) and post their answers; the terminal write. In the job frame
// (`jobToEnding`): a `cancel` signal or a workflow cancellation ends it CANCELLED (runs it started go on), the
// time limit (INTEGRATION_DELIVERY_TIME_LIMIT_SECONDS) FAILED, a failed activity FAILED with its type.
import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities';
import type { DeliveryStatus, IntegrationDeliveryInput } from '../src/temporal/contracts';
import { jobToEnding, longActivity, STATUS_WRITES } from './run-scope';

const { startIntegrationDelivery, finishIntegrationDelivery } = proxyActivities<Activities>(STATUS_WRITES);
/** Calls to outside providers (the code host's token endpoint, the chat app's Web API): retried a few times. */
const { startDeliveryWork, postChatAnswers } = proxyActivities<Activities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 8 },
});

export async function integrationDeliveryWorkflow(
  input: IntegrationDeliveryInput,
): Promise<DeliveryStatus | 'MISSING'> {
  const { awaitAssistantRuns } = proxyActivities<Activities>(
    longActivity(input, { initialInterval: '1 second', maximumInterval: '10 seconds' }),
  );
  return jobToEnding(
    {
      timeLimitSeconds: input.timeLimitSeconds,
      subject: "The delivery's work",
      failedReason: 'DeliveryFailed',
    },
    async (startTimer) => {
      if (!(await startIntegrationDelivery({ deliveryId: input.deliveryId }))) return undefined;
      startTimer();
      const work = await startDeliveryWork({ deliveryId: input.deliveryId });
      if (work.reply && work.assistantRunIds.length) {
        await awaitAssistantRuns({ runIds: work.assistantRunIds });
        await postChatAnswers({ deliveryId: input.deliveryId });
      }
      return { status: 'SUCCEEDED' };
    },
    (ending) => finishIntegrationDelivery({ deliveryId: input.deliveryId, ending }),
  );
}
